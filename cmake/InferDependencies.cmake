# Third-party libraries, all from Debian packages (scripts/install-deps.sh installs them).
find_package(Threads REQUIRED)
find_package(Eigen3 3.3 REQUIRED NO_MODULE)
find_package(spdlog REQUIRED)
if(NOT BLA_VENDOR)
  set(BLA_VENDOR OpenBLAS)
endif()
find_package(BLAS REQUIRED)
# OpenBLAS's cblas.h lives in a per-threading-model folder on Debian.
find_path(INFER_CBLAS_INCLUDE_DIR cblas.h
  PATHS /usr/include/x86_64-linux-gnu/openblas-pthread /usr/include/openblas
  PATH_SUFFIXES openblas-pthread openblas)
if(NOT INFER_CBLAS_INCLUDE_DIR)
  message(FATAL_ERROR "cblas.h not found: install libopenblas-dev")
endif()
# ONNX import: the protobuf classes from Debian's libonnx-dev.
find_package(Protobuf REQUIRED)
find_package(ONNX REQUIRED)  # imports the target onnx_proto
# JSON: safetensors headers, Hugging Face configs and tokenizer.json (header-only, private).
find_package(nlohmann_json REQUIRED)
