#pragma once
// The umbrella header: everything an application needs.
#include <infer/attributes.hpp>
#include <infer/batch.hpp>
#include <infer/device.hpp>
#include <infer/dtype.hpp>
#include <infer/error.hpp>
#include <infer/graph.hpp>
#include <infer/log.hpp>
#include <infer/session.hpp>
#include <infer/shape.hpp>
#include <infer/tensor.hpp>
#include <infer/tensor_io.hpp>
#include <infer/tokenizer.hpp>
#include <infer/version.hpp>
