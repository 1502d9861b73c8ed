# Run by ctest (see CMakeLists.txt): cmake --install, build the consumer against the prefix, run it.
foreach(var BUILD_DIR CONSUMER_SOURCE_DIR WORK_DIR CONFIG GENERATOR CXX_COMPILER)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_install_test.cmake: -D${var}=... is required")
  endif()
endforeach()

set(prefix ${WORK_DIR}/prefix)
set(consumer_build ${WORK_DIR}/consumer-build)
# Start clean, so nothing from an earlier install can make this one look good.
file(REMOVE_RECURSE ${WORK_DIR})

function(run step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${step} failed (${rc}):\n${out}")
  endif()
endfunction()

run("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix} --config ${CONFIG})
# Package registries off: only the fresh prefix may satisfy find_package(infer).
run("configuring the consumer" ${CMAKE_COMMAND} -S ${CONSUMER_SOURCE_DIR} -B ${consumer_build}
  -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_BUILD_TYPE=${CONFIG}
  -DCMAKE_PREFIX_PATH=${prefix}
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF)
file(STRINGS ${consumer_build}/CMakeCache.txt infer_dir REGEX "^infer_DIR:")
if(NOT infer_dir MATCHES "=${prefix}/")
  message(FATAL_ERROR "find_package(infer) found the wrong package: ${infer_dir}")
endif()
run("building the consumer" ${CMAKE_COMMAND} --build ${consumer_build} --config ${CONFIG})

# No LD_LIBRARY_PATH: the consumer must find libinfer, and libinfer its own dependencies, by RPATH.
execute_process(COMMAND ${consumer_build}/app RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out STREQUAL "0 2 6\n")
  message(FATAL_ERROR "consumer exited ${rc}, printed '${out}' (expected '0 2 6'):\n${err}")
endif()
message(STATUS "consumer built against ${prefix} printed: 0 2 6")
