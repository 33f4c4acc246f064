// The generic board RTL in compile order, after rtl/files.f: what the Verilator model of the
// board core, lint and both board builds read. Paths are relative to the repository root.
rtl/board/nmsa_board_pkg.sv
rtl/board/nmsa_board_reset.sv
rtl/board/nmsa_uart_rx.sv
rtl/board/nmsa_uart_tx.sv
rtl/board/nmsa_sp_ram.sv
rtl/board/nmsa_axi_ram.sv
rtl/board/nmsa_uart_bridge.sv
rtl/board/nmsa_board_core.sv
