// The one RTL file list, in compile order, read by Verilator (CMake, lint) and Yosys.
// Paths are relative to the repository root.
rtl/core/nmsa_pkg.sv
rtl/core/nmsa_meta_decoder.sv
rtl/core/nmsa_pe.sv
rtl/core/nmsa_array.sv
