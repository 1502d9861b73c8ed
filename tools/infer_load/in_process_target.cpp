#include "in_process_target.hpp"

#include "metadata.hpp"
#include "request_error.hpp"

namespace infer::load {

namespace {

class InProcessTarget final : public LoadTarget {
public:
    InProcessTarget(const std::string& name, Graph graph, const serve::ModelOptions& options)
        : model_(name, std::move(graph), options) {}
    ~InProcessTarget() override { model_.shutdown(); }

    nlohmann::json metadata() override { return serve::model_metadata(model_.name(), model_.graph(), model_.devices()); }
    nlohmann::json stats() override { return model_.stats(); }

    Connection connect() override {
        return [this](const std::string& body) {
            try {
                model_.answer(body, std::nullopt);
                return 200;
            } catch (...) {
                return serve::status_of_current_exception().status;
            }
        };
    }

private:
    serve::ServedModel model_;
};

}  // namespace

std::unique_ptr<LoadTarget> in_process_target(const std::string& name, Graph graph, const serve::ModelOptions& options) {
    return std::make_unique<InProcessTarget>(name, std::move(graph), options);
}

}  // namespace infer::load
