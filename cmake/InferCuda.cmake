# The CUDA backend is built wherever nvcc is found, so that CI (no GPU) proves it compiles.
set(INFER_HAVE_CUDA OFF)
if(INFER_WITH_CUDA)
  include(CheckLanguage)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      # 90: Hopper (H100/H200); 80: Ampere; 89: Ada. Override with -DCMAKE_CUDA_ARCHITECTURES.
      set(CMAKE_CUDA_ARCHITECTURES 80 89 90)
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    # CMake 3.25 does not know nvcc's C++20 flag, so it is passed directly (our public headers,
    # which the .cu files include, use C++20); CUDA targets then set CUDA_STANDARD_REQUIRED OFF
    # so CMake does not insist on a dialect flag it cannot name.
    string(APPEND CMAKE_CUDA_FLAGS " -std=c++20")
    set(INFER_HAVE_CUDA ON)
    message(STATUS "infer: CUDA backend enabled (architectures ${CMAKE_CUDA_ARCHITECTURES})")
  else()
    message(STATUS "infer: nvcc not found; building without the CUDA backend")
  endif()
endif()
