// render_report IN.json OUT.html: infer-bench's HTML report of a saved document, for the tests
// and for looking at a report without measuring anything.
#include "report.hpp"

#include <fstream>
#include <iostream>

int main(int argc, char** argv) {
    if (argc != 3) {
        std::cerr << "usage: render_report IN.json OUT.html\n";
        return 2;
    }
    std::ifstream in(argv[1]);
    if (!in) {
        std::cerr << "render_report: cannot read " << argv[1] << "\n";
        return 1;
    }
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
        std::cerr << "render_report: " << argv[1] << " is not JSON: " << e.what() << "\n";
        return 1;
    }
    std::ofstream out(argv[2]);
    out << infer::bench::render_html_report(doc);
    if (!out.flush()) {
        std::cerr << "render_report: cannot write " << argv[2] << "\n";
        return 1;
    }
    return 0;
}
