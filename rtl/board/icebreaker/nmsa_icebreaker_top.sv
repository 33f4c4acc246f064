// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// iCEBreaker (iCE40UP5K, SG48): nmsa_board_core on the board's 12 MHz clock, its UART on the
// FT2232H's serial channel, the user button as reset, status on the red and green LEDs and on
// LEDs 1-4 of the PMOD2 snap-off board. Pins: constraints/icebreaker.pcf.
// Build: make board BOARD=icebreaker (docs/fpga.md). The 128 KiB board memory is the UP5K's
// four SPRAM blocks (yosys synth_ice40 -spram infers them from nmsa_sp_ram).
`default_nettype none

module nmsa_icebreaker_top #(
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
  input  logic       clk_12mhz_i,
  input  logic       uart_rx_i,     // bytes from the host
  output logic       uart_tx_o,     // bytes to the host
  input  logic       btn_n_i,       // user button, low while pressed
  output logic       ledr_n_o,      // red LED, lit when low
  output logic       ledg_n_o,      // green LED, lit when low
  output logic [3:0] led_pmod_o     // PMOD2 LEDs 1-4, lit when high
);

  // The core clock is the 12 MHz input itself, without a PLL: this is the one place that states
  // its frequency. A PLL (SB_PLL40_PAD) would go here, with ClkHz its output frequency.
  localparam int unsigned ClkHz = 12_000_000;
  // 12 clock cycles a bit; the FT2232H makes 1 Mbaud exactly.
  localparam int unsigned Baud  = 1_000_000;

  if (ClkHz % Baud != 0) begin : g_bad_baud
    $error("nmsa_icebreaker_top: the baud rate must divide the clock frequency");
  end

  // Reset for the first cycles after configuration, and while the button is pressed.
  logic rst_n;

  nmsa_board_reset u_reset (
    .clk_i  (clk_12mhz_i),
    .rst_ni (btn_n_i),
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
    .MaxPayload  (256)
  ) u_core (
    .clk_i     (clk_12mhz_i),
    .rst_ni    (rst_n),
    .uart_rx_i (uart_rx_i),
    .uart_tx_o (uart_tx_o),
    .led_o     (status)
  );

  // Green: heartbeat; red: the last response was an error.
  assign ledg_n_o   = !status[0];
  assign ledr_n_o   = !status[3];
  assign led_pmod_o = status;

endmodule

`default_nettype wire
