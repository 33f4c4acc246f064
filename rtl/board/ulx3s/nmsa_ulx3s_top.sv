// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// ULX3S 85F (LFE5U-85F, CABGA381): nmsa_board_core on the board's 25 MHz oscillator, its UART on
// the FT231X USB serial port, status on LEDs 0-3, FIRE1 as reset. Pins: constraints/ulx3s.lpf.
// Build: make board BOARD=ulx3s (docs/fpga.md).
`default_nettype none

module nmsa_ulx3s_top #(
  // The accelerator's configuration; syn/board.sh sets it from rtl/configs.json (CONFIG=).
  parameter int unsigned Rows       = 4,
  parameter int unsigned Cols       = 4,
  parameter int unsigned N          = 2,
  parameter int unsigned M          = 4,
  parameter int unsigned DataW      = 8,
  parameter int unsigned AccW       = 32,
  parameter int unsigned AxiDataW   = 64,
  parameter int unsigned ActEntries = 256,
  parameter int unsigned WgtRecords = 64,
  parameter int unsigned EpiEntries = 16,
  parameter int unsigned AccEntries = 256,
  parameter bit          Sparse     = 1'b1,
  parameter int unsigned EpiLanes   = 4,
  parameter int unsigned QueueDepth     = nmsa_pkg::CmdQueueDepth,
  parameter int unsigned FetchChunkCmds = nmsa_pkg::FetchChunkCmds,
  parameter int unsigned FetchChunks    = nmsa_pkg::FetchChunks,
  parameter int unsigned PendingLoads   = nmsa_pkg::PendingLoads,
  parameter int unsigned ReadRequests   = nmsa_pkg::ReadRequests,
  parameter bit          BlockRamFifos  = 1'b0,
  parameter int unsigned CounterW       = 64
) (
  input  logic       clk_25mhz_i,   // on-board oscillator
  input  logic       ftdi_txd_i,    // FT231X TXD: bytes from the host
  output logic       ftdi_rxd_o,    // FT231X RXD: bytes to the host
  input  logic       btn_fire1_i,   // FIRE1, high while pressed
  output logic [7:0] led_o,
  output logic       wifi_gpio0_o
);

  // The core clock is the oscillator itself, without a PLL: this is the one place that states
  // its frequency. A PLL (EHXPLLL) would go here, with ClkHz its output frequency.
  localparam int unsigned ClkHz = 25_000_000;
  // 25 clock cycles a bit. The FT231X divides 3 MHz by an integer, so 1 Mbaud is exact on both
  // sides of the cable.
  localparam int unsigned Baud  = 1_000_000;

  if (ClkHz % Baud != 0) begin : g_bad_baud
    $error("nmsa_ulx3s_top: the baud rate must divide the clock frequency");
  end

  // Reset for the first cycles after configuration, and while FIRE1 is pressed.
  logic rst_n;

  nmsa_board_reset u_reset (
    .clk_i  (clk_25mhz_i),
    .rst_ni (!btn_fire1_i),
    .rst_no (rst_n)
  );

  logic [3:0] status;

  nmsa_board_core #(
    .Rows        (Rows),
    .Cols        (Cols),
    .N           (N),
    .M           (M),
    .DataW       (DataW),
    .AccW        (AccW),
    .AxiDataW    (AxiDataW),
    .ActEntries  (ActEntries),
    .WgtRecords  (WgtRecords),
    .EpiEntries  (EpiEntries),
    .AccEntries  (AccEntries),
    .Sparse      (Sparse),
    .EpiLanes    (EpiLanes),
    .QueueDepth     (QueueDepth),
    .FetchChunkCmds (FetchChunkCmds),
    .FetchChunks    (FetchChunks),
    .PendingLoads   (PendingLoads),
    .ReadRequests   (ReadRequests),
    .BlockRamFifos  (BlockRamFifos),
    .CounterW       (CounterW),
    .ClkHz       (ClkHz),
    .ClksPerBit  (ClkHz / Baud),
    .TimeoutClks (ClkHz / 50),
    .MemBase     (32'h1000_0000),
    .MemBytes    (131072),
    .MaxPayload  (1024)
  ) u_core (
    .clk_i     (clk_25mhz_i),
    .rst_ni    (rst_n),
    .uart_rx_i (ftdi_txd_i),
    .uart_tx_o (ftdi_rxd_o),
    .led_o     (status)
  );

  assign led_o = {4'b0000, status};

  // The on-board ESP32 boots its own firmware only with GPIO0 high; low would put it into its
  // serial bootloader, where it may drive the shared pins.
  assign wifi_gpio0_o = 1'b1;

endmodule

`default_nettype wire
