#pragma once
// CUDA graphs as the CUDA backend's segments: a run of nodes is captured once into a graph and
// then replayed with one launch per run, which removes the per-node launch cost that dominates
// small batches (a DistilBERT layer at batch 1 is a few microseconds of GPU work per node).
#include <infer/backend.hpp>

#include <vector>

namespace infer::cuda {

// Claims the whole offer as one captured segment when the session allows capture.
std::vector<SegmentClaim> claim_graph_segments(const SegmentOffer& offer);

}  // namespace infer::cuda
