# The report's HTML check in headless Chromium (filled in with the report writer).
#
# nmsa_report_sample writes a synthetic report with every section filled (tests/report/
# sample_report.hpp, shared with tests/sw/test_report.cpp) into build/report_sample; the check
# opens its index.html in Debian's chromium (tests/report/check_html.sh) and leaves a screenshot,
# build/report_sample/index.png, to look at. A second check proves that the script rejects a
# page without the report's sections, and the gate reads the sample's report.json back.
#
# Other reports (the demo's) get the same check with
#   nmsa_add_report_html_test(NAME <test> REPORT <dir or index.html> [FIXTURES_REQUIRED <f>...])
# e.g. nmsa_add_report_html_test(NAME demo.report_html REPORT ${CMAKE_BINARY_DIR}/demo
#                                FIXTURES_REQUIRED nmsa_demo_report)

function(nmsa_add_report_html_test)
  cmake_parse_arguments(ARG "" "NAME;REPORT" "FIXTURES_REQUIRED" ${ARGN})
  if(NOT ARG_NAME OR NOT ARG_REPORT)
    message(FATAL_ERROR "nmsa_add_report_html_test needs NAME and REPORT")
  endif()
  add_test(NAME ${ARG_NAME}
           COMMAND ${BASH_PROGRAM} "${CMAKE_SOURCE_DIR}/tests/report/check_html.sh" "${ARG_REPORT}")
  # Chromium's start-up takes seconds; two runs (DOM and screenshot) per check.
  set_tests_properties(${ARG_NAME} PROPERTIES TIMEOUT 300 LABELS report)
  if(ARG_FIXTURES_REQUIRED)
    set_tests_properties(${ARG_NAME} PROPERTIES FIXTURES_REQUIRED "${ARG_FIXTURES_REQUIRED}")
  endif()
endfunction()

add_executable(nmsa_report_sample tests/report/report_sample.cpp)
target_link_libraries(nmsa_report_sample PRIVATE nmsa)
target_compile_options(nmsa_report_sample PRIVATE -Wall -Wextra)

add_test(NAME report.sample
         COMMAND nmsa_report_sample "${CMAKE_BINARY_DIR}/report_sample")
set_tests_properties(report.sample PROPERTIES FIXTURES_SETUP nmsa_report_sample LABELS report)

nmsa_add_report_html_test(NAME report.html_in_chromium REPORT "${CMAKE_BINARY_DIR}/report_sample"
                          FIXTURES_REQUIRED nmsa_report_sample)

# The check must be able to fail: a page with one section and no plot is rejected, by name.
add_test(NAME report.html_check_can_fail
         COMMAND ${BASH_PROGRAM} "${CMAKE_SOURCE_DIR}/tests/report/check_html.sh"
                 "${CMAKE_SOURCE_DIR}/tests/report/broken_report.html")
set_tests_properties(report.html_check_can_fail PROPERTIES
  PASS_REGULAR_EXPRESSION "FAIL section #targets missing.*FAIL no inline <svg>"
  ENVIRONMENT "NMSA_SHOT=${CMAKE_BINARY_DIR}/report_broken.png"  # not into the source tree
  TIMEOUT 300 LABELS report)

# What the writer wrote, the gate reads: the sample against itself passes every limit.
add_test(NAME report.gate_reads_sample
         COMMAND nmsa_cli gate --baseline "${CMAKE_BINARY_DIR}/report_sample"
                 --candidate "${CMAKE_BINARY_DIR}/report_sample/report.json"
                 --max-quality-drop 0 --min-speedup 1 --max-p99-cycles 100000000)
set_tests_properties(report.gate_reads_sample PROPERTIES
  FIXTURES_REQUIRED nmsa_report_sample PASS_REGULAR_EXPRESSION "gate: PASS" LABELS report)
