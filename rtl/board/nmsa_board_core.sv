// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Everything of an nmsa board except its clock and pins: the accelerator (nmsa_top), the on-chip
// memory behind its AXI4 master (nmsa_axi_ram), and the UART bridge that gives a host its
// registers and that memory (nmsa_uart_rx, nmsa_uart_tx, nmsa_uart_bridge). Generic RTL: this is
// exactly what the simulation compiles, and each board's top (rtl/board/<board>/) adds the
// clock, the power-on reset and the pins. docs/fpga.md describes the protocol and the window.
//
// LEDs: [0] heartbeat (1 Hz), [1] the accelerator's interrupt, [2] UART traffic, [3] the last
// response was an error (each of the last two held on long enough to see).
`default_nettype none

module nmsa_board_core #(
  // The accelerator's configuration (rtl/configs.json); the board memory has a 64-bit port.
  parameter int unsigned Rows        = 4,
  parameter int unsigned Cols        = 4,
  parameter int unsigned N           = 2,
  parameter int unsigned M           = 4,
  parameter int unsigned DataW       = 8,
  parameter int unsigned AccW        = 32,
  parameter int unsigned AxiDataW    = 64,
  parameter int unsigned ActEntries  = 256,
  parameter int unsigned WgtRecords  = 64,
  parameter int unsigned EpiEntries  = 16,
  parameter int unsigned AccEntries  = 256,
  parameter bit          Sparse      = 1'b1,
  parameter int unsigned EpiLanes    = 4,
  parameter int unsigned QueueDepth     = nmsa_pkg::CmdQueueDepth,
  parameter int unsigned FetchChunkCmds = nmsa_pkg::FetchChunkCmds,
  parameter int unsigned FetchChunks    = nmsa_pkg::FetchChunks,
  parameter int unsigned PendingLoads   = nmsa_pkg::PendingLoads,
  parameter int unsigned ReadRequests   = nmsa_pkg::ReadRequests,
  parameter bit          BlockRamFifos  = 1'b0,
  parameter int unsigned CounterW       = 64,
  // The board.
  parameter int unsigned ClkHz       = 25_000_000,
  parameter int unsigned ClksPerBit  = 25,             // ClkHz / baud rate
  parameter int unsigned TimeoutClks = ClkHz / 50,     // byte timeout inside a frame: 20 ms
  parameter int unsigned MemBase     = 32'h1000_0000,
  parameter int unsigned MemBytes    = 131072,
  parameter int unsigned MaxPayload  = 1024
) (
  input  logic       clk_i,
  input  logic       rst_ni,      // asynchronous assertion, release synchronous to clk_i
  input  logic       uart_rx_i,
  output logic       uart_tx_o,
  output logic [3:0] led_o
);

  if (AxiDataW != 64) begin : g_bad_axi
    $error("nmsa_board_core: the board memory has a 64-bit AXI port (AxiDataW = 64)");
  end
  if (ClkHz < 20) begin : g_bad_clk
    $error("nmsa_board_core: ClkHz must be at least 20 (the LED timers divide it)");
  end

  // ---------------------------------------------------------------------------------------------
  // The accelerator and its memory
  // ---------------------------------------------------------------------------------------------
  logic        irq;
  logic        csr_aw_valid, csr_aw_ready, csr_w_valid, csr_w_ready, csr_b_valid, csr_b_ready;
  logic        csr_ar_valid, csr_ar_ready, csr_r_valid, csr_r_ready;
  logic [11:0] csr_aw_addr, csr_ar_addr;
  logic [31:0] csr_w_data, csr_r_data;
  logic [3:0]  csr_w_strb;
  logic [1:0]  csr_b_resp, csr_r_resp;

  logic        ar_valid, ar_ready, ar_id, r_valid, r_ready, r_id, r_last;
  logic        aw_valid, aw_ready, aw_id, w_valid, w_ready, w_last, b_valid, b_ready, b_id;
  logic [63:0] ar_addr, aw_addr, r_data, w_data;
  logic [7:0]  ar_len, aw_len, w_strb;
  logic [2:0]  ar_size, aw_size, ar_prot, aw_prot;
  logic [1:0]  ar_burst, aw_burst, r_resp, b_resp;
  logic [3:0]  ar_cache, aw_cache;

  nmsa_top #(
    .Rows       (Rows),
    .Cols       (Cols),
    .N          (N),
    .M          (M),
    .DataW      (DataW),
    .AccW       (AccW),
    .AxiDataW   (AxiDataW),
    .ActEntries (ActEntries),
    .WgtRecords (WgtRecords),
    .EpiEntries (EpiEntries),
    .AccEntries (AccEntries),
    .Sparse     (Sparse),
    .EpiLanes   (EpiLanes),
    .QueueDepth     (QueueDepth),
    .FetchChunkCmds (FetchChunkCmds),
    .FetchChunks    (FetchChunks),
    .PendingLoads   (PendingLoads),
    .ReadRequests   (ReadRequests),
    .BlockRamFifos  (BlockRamFifos),
    .CounterW       (CounterW)
  ) u_top (
    .clk_i          (clk_i),
    .rst_ni         (rst_ni),
    .irq_o          (irq),
    .csr_aw_valid_i (csr_aw_valid),
    .csr_aw_ready_o (csr_aw_ready),
    .csr_aw_addr_i  (csr_aw_addr),
    .csr_w_valid_i  (csr_w_valid),
    .csr_w_ready_o  (csr_w_ready),
    .csr_w_data_i   (csr_w_data),
    .csr_w_strb_i   (csr_w_strb),
    .csr_b_valid_o  (csr_b_valid),
    .csr_b_ready_i  (csr_b_ready),
    .csr_b_resp_o   (csr_b_resp),
    .csr_ar_valid_i (csr_ar_valid),
    .csr_ar_ready_o (csr_ar_ready),
    .csr_ar_addr_i  (csr_ar_addr),
    .csr_r_valid_o  (csr_r_valid),
    .csr_r_ready_i  (csr_r_ready),
    .csr_r_data_o   (csr_r_data),
    .csr_r_resp_o   (csr_r_resp),
    .ar_valid_o     (ar_valid),
    .ar_ready_i     (ar_ready),
    .ar_id_o        (ar_id),
    .ar_addr_o      (ar_addr),
    .ar_len_o       (ar_len),
    .ar_size_o      (ar_size),
    .ar_burst_o     (ar_burst),
    .ar_cache_o     (ar_cache),
    .ar_prot_o      (ar_prot),
    .r_valid_i      (r_valid),
    .r_ready_o      (r_ready),
    .r_id_i         (r_id),
    .r_data_i       (r_data),
    .r_resp_i       (r_resp),
    .r_last_i       (r_last),
    .aw_valid_o     (aw_valid),
    .aw_ready_i     (aw_ready),
    .aw_id_o        (aw_id),
    .aw_addr_o      (aw_addr),
    .aw_len_o       (aw_len),
    .aw_size_o      (aw_size),
    .aw_burst_o     (aw_burst),
    .aw_cache_o     (aw_cache),
    .aw_prot_o      (aw_prot),
    .w_valid_o      (w_valid),
    .w_ready_i      (w_ready),
    .w_data_o       (w_data),
    .w_strb_o       (w_strb),
    .w_last_o       (w_last),
    .b_valid_i      (b_valid),
    .b_ready_o      (b_ready),
    .b_id_i         (b_id),
    .b_resp_i       (b_resp)
  );

  logic                        mem_req, mem_gnt, mem_we, mem_rvalid;
  logic [$clog2(MemBytes)-4:0] mem_addr;
  logic [63:0]                 mem_wdata, mem_rdata;
  logic [7:0]                  mem_wstrb;

  nmsa_axi_ram #(
    .Base  (MemBase),
    .Bytes (MemBytes)
  ) u_mem (
    .clk_i         (clk_i),
    .rst_ni        (rst_ni),
    .ar_valid_i    (ar_valid),
    .ar_ready_o    (ar_ready),
    .ar_id_i       (ar_id),
    .ar_addr_i     (ar_addr),
    .ar_len_i      (ar_len),
    .ar_size_i     (ar_size),
    .ar_burst_i    (ar_burst),
    .ar_cache_i    (ar_cache),
    .ar_prot_i     (ar_prot),
    .r_valid_o     (r_valid),
    .r_ready_i     (r_ready),
    .r_id_o        (r_id),
    .r_data_o      (r_data),
    .r_resp_o      (r_resp),
    .r_last_o      (r_last),
    .aw_valid_i    (aw_valid),
    .aw_ready_o    (aw_ready),
    .aw_id_i       (aw_id),
    .aw_addr_i     (aw_addr),
    .aw_len_i      (aw_len),
    .aw_size_i     (aw_size),
    .aw_burst_i    (aw_burst),
    .aw_cache_i    (aw_cache),
    .aw_prot_i     (aw_prot),
    .w_valid_i     (w_valid),
    .w_ready_o     (w_ready),
    .w_data_i      (w_data),
    .w_strb_i      (w_strb),
    .w_last_i      (w_last),
    .b_valid_o     (b_valid),
    .b_ready_i     (b_ready),
    .b_id_o        (b_id),
    .b_resp_o      (b_resp),
    .host_req_i    (mem_req),
    .host_gnt_o    (mem_gnt),
    .host_we_i     (mem_we),
    .host_addr_i   (mem_addr),
    .host_wdata_i  (mem_wdata),
    .host_wstrb_i  (mem_wstrb),
    .host_rvalid_o (mem_rvalid),
    .host_rdata_o  (mem_rdata)
  );

  // ---------------------------------------------------------------------------------------------
  // The UART bridge
  // ---------------------------------------------------------------------------------------------
  logic       rx_valid, rx_err, tx_valid, tx_ready, bridge_err;
  logic [7:0] rx_data, tx_data;

  nmsa_uart_rx #(.ClksPerBit (ClksPerBit)) u_uart_rx (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .rx_i        (uart_rx_i),
    .valid_o     (rx_valid),
    .data_o      (rx_data),
    .frame_err_o (rx_err)
  );

  nmsa_uart_tx #(.ClksPerBit (ClksPerBit)) u_uart_tx (
    .clk_i   (clk_i),
    .rst_ni  (rst_ni),
    .valid_i (tx_valid),
    .ready_o (tx_ready),
    .data_i  (tx_data),
    .tx_o    (uart_tx_o)
  );

  nmsa_uart_bridge #(
    .MaxPayload  (MaxPayload),
    .MemBase     (MemBase),
    .MemBytes    (MemBytes),
    .ClkHz       (ClkHz),
    .TimeoutClks (TimeoutClks)
  ) u_bridge (
    .clk_i          (clk_i),
    .rst_ni         (rst_ni),
    .rx_valid_i     (rx_valid),
    .rx_data_i      (rx_data),
    .rx_err_i       (rx_err),
    .tx_valid_o     (tx_valid),
    .tx_ready_i     (tx_ready),
    .tx_data_o      (tx_data),
    .csr_aw_valid_o (csr_aw_valid),
    .csr_aw_ready_i (csr_aw_ready),
    .csr_aw_addr_o  (csr_aw_addr),
    .csr_w_valid_o  (csr_w_valid),
    .csr_w_ready_i  (csr_w_ready),
    .csr_w_data_o   (csr_w_data),
    .csr_w_strb_o   (csr_w_strb),
    .csr_b_valid_i  (csr_b_valid),
    .csr_b_ready_o  (csr_b_ready),
    .csr_b_resp_i   (csr_b_resp),
    .csr_ar_valid_o (csr_ar_valid),
    .csr_ar_ready_i (csr_ar_ready),
    .csr_ar_addr_o  (csr_ar_addr),
    .csr_r_valid_i  (csr_r_valid),
    .csr_r_ready_o  (csr_r_ready),
    .csr_r_data_i   (csr_r_data),
    .csr_r_resp_i   (csr_r_resp),
    .mem_req_o      (mem_req),
    .mem_gnt_i      (mem_gnt),
    .mem_we_o       (mem_we),
    .mem_addr_o     (mem_addr),
    .mem_wdata_o    (mem_wdata),
    .mem_wstrb_o    (mem_wstrb),
    .mem_rvalid_i   (mem_rvalid),
    .mem_rdata_i    (mem_rdata),
    .irq_i          (irq),
    .err_o          (bridge_err)
  );

  // ---------------------------------------------------------------------------------------------
  // LEDs
  // ---------------------------------------------------------------------------------------------
  localparam int unsigned LedW       = $clog2(ClkHz / 2 + 1);
  localparam logic [LedW-1:0] Half   = LedW'(ClkHz / 2 - 1);   // 0.5 s
  localparam logic [LedW-1:0] Blink  = LedW'(ClkHz / 20);      // 50 ms

  logic [LedW-1:0] beat_d, beat_q, act_d, act_q, err_d, err_q;
  logic            beat_led_d, beat_led_q;

  always_comb begin
    beat_d     = beat_q == Half ? '0 : beat_q + 1'b1;
    beat_led_d = beat_q == Half ? !beat_led_q : beat_led_q;
    act_d      = (rx_valid || (tx_valid && tx_ready)) ? Blink : act_q == '0 ? '0 : act_q - 1'b1;
    err_d      = bridge_err ? Half : err_q == '0 ? '0 : err_q - 1'b1;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      beat_q     <= '0;
      beat_led_q <= 1'b0;
      act_q      <= '0;
      err_q      <= '0;
    end else begin
      beat_q     <= beat_d;
      beat_led_q <= beat_led_d;
      act_q      <= act_d;
      err_q      <= err_d;
    end
  end

  assign led_o = {err_q != '0, act_q != '0, irq, beat_led_q};

endmodule

`default_nettype wire
