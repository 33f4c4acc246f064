# Bugs the regression must catch (docs/verification.md, "Planted bugs").
#
# tests/mutants/mutants.json plants bugs in copies of the RTL files (scripts/make_mutants.py), each
# behind its plusarg +nmsa_mutant_<name>, and one `small` top is verilated from them.
# nmsa_soak_mutants is the soak on that model. For each mutant, its plusarg on (NMSA_PLUSARGS),
# the soak must report the bug as the spec says (the assertion that fires, or the soak's own
# check); with no plusarg the same seeds must pass, so the model is the real RTL until a bug is
# switched on.

set(NMSA_MUTANT_SPEC "${CMAKE_SOURCE_DIR}/tests/mutants/mutants.json")
set(NMSA_MUTANT_DIR "${CMAKE_BINARY_DIR}/mutants/rtl")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${NMSA_MUTANT_SPEC}")
file(READ "${NMSA_MUTANT_SPEC}" _mutant_json)
string(JSON _mutant_count LENGTH "${_mutant_json}" mutants)
math(EXPR _mutant_last "${_mutant_count} - 1")

# The RTL file list with every mutated file replaced by its copy, in the same order.
set(_mutated_originals "")
set(_mutated_copies "")
foreach(_i RANGE ${_mutant_last})
  string(JSON _file GET "${_mutant_json}" mutants ${_i} file)
  set(_original "${CMAKE_SOURCE_DIR}/${_file}")
  if(NOT _original IN_LIST _mutated_originals)
    get_filename_component(_base "${_file}" NAME)
    list(APPEND _mutated_originals "${_original}")
    list(APPEND _mutated_copies "${NMSA_MUTANT_DIR}/${_base}")
  endif()
endforeach()
set(NMSA_MUTANT_SOURCES "")
foreach(_source IN LISTS NMSA_RTL_SOURCES)
  list(FIND _mutated_originals "${_source}" _at)
  if(_at EQUAL -1)
    list(APPEND NMSA_MUTANT_SOURCES "${_source}")
  else()
    list(GET _mutated_copies ${_at} _copy)
    list(APPEND NMSA_MUTANT_SOURCES "${_copy}")
  endif()
endforeach()

# Verilator reads the sources when CMake configures (for its file list), so the copies are made
# then, and again whenever the build finds an original or the spec newer.
execute_process(
  COMMAND ${Python3_EXECUTABLE} "${CMAKE_SOURCE_DIR}/scripts/make_mutants.py"
          "${NMSA_MUTANT_SPEC}" "${NMSA_MUTANT_DIR}"
  RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "scripts/make_mutants.py failed")
endif()
add_custom_command(
  OUTPUT ${_mutated_copies}
  COMMAND ${Python3_EXECUTABLE} "${CMAKE_SOURCE_DIR}/scripts/make_mutants.py"
          "${NMSA_MUTANT_SPEC}" "${NMSA_MUTANT_DIR}"
  DEPENDS "${CMAKE_SOURCE_DIR}/scripts/make_mutants.py" "${NMSA_MUTANT_SPEC}" ${_mutated_originals}
  COMMENT "Planting the mutants of tests/mutants/mutants.json")

nmsa_config_params(_gparams small nmsa_top)
verilate(nmsa_models PREFIX Vnmsa_top_small_mutants TOP_MODULE nmsa_top TRACE_FST
  SOURCES ${NMSA_MUTANT_SOURCES}
  VERILATOR_ARGS ${NMSA_PLAIN_VERILATOR_ARGS} ${_gparams})

add_executable(nmsa_soak_mutants tests/soak/soak.cpp)
target_compile_definitions(nmsa_soak_mutants PRIVATE NMSA_SOAK_MUTANTS)
target_link_libraries(nmsa_soak_mutants PRIVATE nmsa_models CLI11::CLI11 nlohmann_json::nlohmann_json)
target_compile_options(nmsa_soak_mutants PRIVATE -Wall)

# Seeds enough for every bug to be met: a run stops at the first assertion that fires, and the
# rarest (a STORE's write request pending at the very cycle of an abort) needed 719 seeds; the
# deadlock the soak itself reports first comes at seed 1300. The model aborts the process on an
# assertion; CTest would count a test that dies of a signal as failed whatever its output, so bash
# runs it and the test passes on the expected report alone.
set(NMSA_MUTANT_SEEDS 2000)
add_test(NAME mutants.none_fire
         COMMAND nmsa_soak_mutants --config small --first-seed 1 --seeds ${NMSA_MUTANT_SEEDS})
set_tests_properties(mutants.none_fire PROPERTIES LABELS mutants TIMEOUT 600)
foreach(_i RANGE ${_mutant_last})
  string(JSON _name GET "${_mutant_json}" mutants ${_i} name)
  string(JSON _detected_by GET "${_mutant_json}" mutants ${_i} detected_by)
  add_test(NAME mutants.${_name}
           COMMAND ${BASH_PROGRAM} -c "\"$0\" \"$@\" 2>&1; exit 0" $<TARGET_FILE:nmsa_soak_mutants>
                   --config small --first-seed 1 --seeds ${NMSA_MUTANT_SEEDS})
  set_tests_properties(mutants.${_name} PROPERTIES LABELS mutants TIMEOUT 600
                       ENVIRONMENT NMSA_PLUSARGS=+nmsa_mutant_${_name}
                       PASS_REGULAR_EXPRESSION "${_detected_by}")
endforeach()
