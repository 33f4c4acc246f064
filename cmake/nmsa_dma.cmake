# DMA engines and AXI harness tests (see tb/ and tests/rtl/test_dma.cpp).
