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
# HTTP for infer-serve (optional): Debian's cpp-httplib, a compiled library. It was built with
# CPPHTTPLIB_OPENSSL_SUPPORT, which changes the layout of its Request, so its users must define
# it too and see OpenSSL's headers (libssl-dev). Looked up by path rather than pkg-config, so
# that packages unpacked into a private prefix (scripts/gpu-check.sh) are found as well.
find_path(INFER_HTTPLIB_INCLUDE_DIR httplib.h)
find_library(INFER_HTTPLIB_LIBRARY cpp-httplib)
find_path(INFER_OPENSSL_INCLUDE_DIR openssl/ssl.h)
find_path(INFER_OPENSSL_CONFIG_DIR openssl/configuration.h)  # multiarch: include/x86_64-linux-gnu
set(INFER_HAVE_HTTPLIB FALSE)
if(INFER_HTTPLIB_INCLUDE_DIR AND INFER_HTTPLIB_LIBRARY AND INFER_OPENSSL_INCLUDE_DIR AND INFER_OPENSSL_CONFIG_DIR)
  set(INFER_HAVE_HTTPLIB TRUE)
  add_library(infer::httplib INTERFACE IMPORTED)
  set_target_properties(infer::httplib PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${INFER_HTTPLIB_INCLUDE_DIR};${INFER_OPENSSL_INCLUDE_DIR};${INFER_OPENSSL_CONFIG_DIR}"
    INTERFACE_COMPILE_DEFINITIONS CPPHTTPLIB_OPENSSL_SUPPORT
    INTERFACE_LINK_LIBRARIES "${INFER_HTTPLIB_LIBRARY}")
endif()
