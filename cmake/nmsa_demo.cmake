# The deployment demo (make demo, docs/demo.md) and its short version in the regression.

add_executable(nmsa_demo sw/demo/main.cpp sw/demo/options.cpp sw/demo/cnn_demo.cpp sw/demo/hardware.cpp sw/demo/recipes.cpp sw/demo/regressed_workload.cpp sw/demo/test_set.cpp
               sw/demo/wide_model.cpp)
target_link_libraries(nmsa_demo PRIVATE nmsa_models CLI11::CLI11)
target_compile_options(nmsa_demo PRIVATE -Wall)
# What the report's tags pin: the source tree (for its git revision), Verilator, the build flags.
get_directory_property(_nmsa_compile_options COMPILE_OPTIONS)
list(JOIN _nmsa_compile_options " " _nmsa_compile_options)  # a list would split the definition
string(TOUPPER "${CMAKE_BUILD_TYPE}" _nmsa_build_type)
string(STRIP "${CMAKE_BUILD_TYPE} ${CMAKE_CXX_FLAGS} ${CMAKE_CXX_FLAGS_${_nmsa_build_type}} ${_nmsa_compile_options}" _nmsa_flags)
target_compile_definitions(nmsa_demo PRIVATE
  NMSA_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
  NMSA_BUILD_DIR="${CMAKE_BINARY_DIR}"
  NMSA_VERILATOR_VERSION="${verilator_VERSION}"
  NMSA_BUILD_FLAGS="${_nmsa_flags}")

# The whole path in about a minute: --quick (config small, one epoch, 300 test images), then the
# report's files, keys and figures, the HTML in headless Chromium, and nmsa gate on the result.
add_test(NAME demo.quick
         COMMAND ${BASH_PROGRAM} "${CMAKE_SOURCE_DIR}/tests/demo/test_demo_quick.sh"
                 $<TARGET_FILE:nmsa_demo> $<TARGET_FILE:nmsa_cli> "${CMAKE_BINARY_DIR}/demo_quick")
set_tests_properties(demo.quick PROPERTIES TIMEOUT 900 LABELS demo)
