// The one RTL file list, in compile order, read by Verilator (CMake, lint) and Yosys.
// Paths are relative to the repository root.
rtl/core/nmsa_pkg.sv
rtl/ctrl/nmsa_reg_pkg.sv
rtl/mem/nmsa_fifo.sv
rtl/mem/nmsa_spad.sv
rtl/mem/nmsa_reg_slice.sv
rtl/core/nmsa_mul.sv
rtl/core/nmsa_meta_decoder.sv
rtl/core/nmsa_pe.sv
rtl/core/nmsa_array.sv
rtl/core/nmsa_compute.sv
rtl/core/nmsa_load.sv
rtl/core/nmsa_epilogue.sv
rtl/core/nmsa_store.sv
rtl/ctrl/nmsa_cmd.sv
rtl/ctrl/nmsa_csr.sv
rtl/ctrl/nmsa_run_ctrl.sv
rtl/dma/nmsa_burst_gen.sv
rtl/dma/nmsa_dma_rd.sv
rtl/dma/nmsa_dma_wr.sv
rtl/top/nmsa_top.sv
