#pragma once
// The umbrella header: everything an application needs.
#include <infer/advice.hpp>
#include <infer/attributes.hpp>
#include <infer/batch.hpp>
#include <infer/batcher.hpp>
#include <infer/device.hpp>
#include <infer/dtype.hpp>
#include <infer/error.hpp>
<<<<<<< HEAD
#include <infer/generate.hpp>
=======
#include <infer/generation_tokenizers.hpp>
>>>>>>> tokenizers
#include <infer/graph.hpp>
#include <infer/log.hpp>
#include <infer/measure.hpp>
#include <infer/memory.hpp>
#include <infer/profile.hpp>
#include <infer/safetensors.hpp>
#include <infer/session.hpp>
#include <infer/shape.hpp>
#include <infer/tensor.hpp>
#include <infer/tensor_io.hpp>
#include <infer/tokenizer.hpp>
#include <infer/version.hpp>
