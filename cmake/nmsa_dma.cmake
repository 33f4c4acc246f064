# DMA engines and AXI harness tests (see tb/ and tests/rtl/test_dma.cpp).
#
# Each engine is verilated in several parameter sets, each its own model (PREFIX), so that the
# tests cover the default 64-bit engine, the extremes of the bus width (32 and 512 bits), a long
# MaxBurstBeats (256), a non-power-of-two MaxOutstanding, and a single-outstanding read engine
# that the throughput test measures the default one against. A model reads only its engine and
# the FIFO and burst generator they share: modules in progress elsewhere in rtl/files.f cannot break it
# (scripts/lint.sh still lints it together with the whole list).

set(NMSA_DMA_RD_SV "${CMAKE_SOURCE_DIR}/rtl/dma/nmsa_dma_rd.sv")
set(NMSA_DMA_WR_SV "${CMAKE_SOURCE_DIR}/rtl/dma/nmsa_dma_wr.sv")
set(NMSA_DMA_COMMON_SV
  "${CMAKE_SOURCE_DIR}/rtl/mem/nmsa_fifo.sv"
  "${CMAKE_SOURCE_DIR}/rtl/dma/nmsa_burst_gen.sv")

# name:engine:AddrW:DataW:LenW:MaxBurstBeats:MaxOutstanding
set(NMSA_DMA_MODELS
  "dma_rd:rd:64:64:16:16:4"
  "dma_rd_o1:rd:64:64:16:16:1"
  "dma_rd_w32:rd:64:32:20:256:2"
  "dma_rd_w512:rd:48:512:16:8:3"
  "dma_wr:wr:64:64:16:16:4"
  "dma_wr_w32:wr:64:32:20:256:2"
  "dma_wr_w512:wr:48:512:16:8:3"
)

foreach(_spec IN LISTS NMSA_DMA_MODELS)
  string(REPLACE ":" ";" _model "${_spec}")
  list(GET _model 0 _name)
  list(GET _model 1 _engine)
  list(GET _model 2 _addr_w)
  list(GET _model 3 _data_w)
  list(GET _model 4 _len_w)
  list(GET _model 5 _burst)
  list(GET _model 6 _outstanding)
  if(_engine STREQUAL "rd")
    set(_sv "${NMSA_DMA_RD_SV}")
  else()
    set(_sv "${NMSA_DMA_WR_SV}")
  endif()
  verilate(nmsa_models PREFIX Vnmsa_${_name} TOP_MODULE nmsa_dma_${_engine}
    SOURCES ${NMSA_DMA_COMMON_SV} "${_sv}"
    VERILATOR_ARGS ${NMSA_BLOCK_VERILATOR_ARGS}
      -GAddrW=${_addr_w} -GAxiDataW=${_data_w} -GLenW=${_len_w}
      -GMaxBurstBeats=${_burst} -GMaxOutstanding=${_outstanding})
endforeach()

target_sources(nmsa_models PRIVATE
  tb/src/axi_memory.cpp
  tb/src/axi_monitor.cpp
  tb/src/axi_lite.cpp
)

add_executable(nmsa_dma_tests tests/rtl/test_dma.cpp tests/rtl/test_axi_harness.cpp)
target_link_libraries(nmsa_dma_tests PRIVATE nmsa_models GTest::gtest_main)
target_compile_options(nmsa_dma_tests PRIVATE -Wall)
gtest_discover_tests(nmsa_dma_tests DISCOVERY_TIMEOUT 120 PROPERTIES TIMEOUT 600 LABELS rtl)
