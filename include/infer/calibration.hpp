#pragma once
// Static int8 quantization: the range of every quantized product's activations, measured once
// on representative inputs, instead of each row's own range at run time.
//
//   infer::Calibration c = infer::calibrate(graph, sample_batches);   // f32 runs on the CPU
//   c.save("model.calibration.json");                                  // beside the model
//   infer::Session session(graph, {.precision = infer::Precision::int8,
//                                  .calibration = std::make_shared<infer::Calibration>(
//                                      infer::Calibration::load("model.calibration.json"))});
//
// Each product by a weight (the nodes precision int8 quantizes) gets one scale and zero point
// for its input A, from the range the calibration saw (min-max; a percentile of |values| that
// ignores rare outliers; or the bound that loses the least information, by entropy); values
// outside are clamped. The calibration is also the per-layer
// report: each range carries the error its quantization gave the input on the calibration data,
// and a product whose error is too large, or which the calibration has no range for, keeps
// dynamic per-row quantization.
#include <infer/batch.hpp>
#include <infer/graph.hpp>

#include <map>
#include <string>
#include <vector>

namespace infer {

enum class CalibrationMethod {
    min_max,     // the least and greatest value seen
    percentile,  // the range holding `percentile` per cent of the values seen, by magnitude
    // The magnitude bound whose clipped quantization keeps the distribution of the values seen
    // closest to itself: the least KL divergence between the histogram of |values| clipped at
    // the bound and that histogram quantized to the steps int8 gives it (TensorRT's entropy
    // calibration; one more run over the batches for the histogram).
    entropy,
};

struct CalibrationOptions {
    CalibrationMethod method = CalibrationMethod::min_max;
    double percentile = 99.99;
    int threads = 0;  // CPU threads for the f32 runs; 0: all cores
    // A product whose input loses more than this to one static range (relative RMS error of
    // the quantized input on the calibration data) stays dynamic: transformer activations have
    // outlier channels that one range per tensor cannot hold without coarsening every other.
    double max_error = 0.04;
};

struct ActivationRange {
    float low = 0, high = 0;  // widened to include 0
    double error = 0;         // relative RMS error of the input quantized with this range
    bool dynamic = false;     // error above CalibrationOptions::max_error: quantized per row
};

class Calibration {
public:
    // Ranges by the name of the product node (as the session's int8 pipeline names it).
    std::map<std::string, ActivationRange> ranges;

    // JSON: {"format": "infer-calibration/1",
    //        "ranges": {"node": {"low": L, "high": H, "error": E, "dynamic": false}, ...}}.
    void save(const std::string& path) const;
    // Throws InvalidArgument for a file that is not such a document.
    static Calibration load(const std::string& path);
};

// Runs `graph` in f32 on the CPU over `batches` and records the range of the input of every
// product precision int8 would quantize. Throws InvalidArgument for no batches.
Calibration calibrate(const Graph& graph, const std::vector<Batch>& batches, const CalibrationOptions& options = {});

}  // namespace infer
