// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// On-chip memory behind nmsa_top's AXI4 master, and a word port for the UART bridge: the board's
// "host memory" (docs/fpga.md, "The memory window").
//
// The window is Bytes bytes at byte address Base (Bytes a power of two, Base a multiple of it).
// AXI4 slave with 64-bit data: INCR bursts of full-width beats (up to 256), WSTRB honoured, one
// transaction per direction at a time (AR and AW are taken again once the previous burst has all
// its beats), in-order responses echoing the ID. A beat outside the window answers DECERR and a
// burst that is not INCR or not 8 bytes a beat answers SLVERR, beat by beat for reads and as the
// worst of the burst in BRESP; such beats touch no memory. A start address that is not 8-byte
// aligned is aligned down, as AXI defines for a full-width burst.
//
// The memory (nmsa_sp_ram) has one port, shared cycle by cycle: the host port first (the bridge
// makes at most one access every few cycles, so it cannot starve the DMA), then read and write
// beats in turn when both want it. Reads flow through a pipeline register and a 4-beat FIFO, so
// R back-pressure never stalls the memory and a steady stream moves one beat per cycle.
`default_nettype none

module nmsa_axi_ram #(
  parameter int unsigned Base  = 32'h1000_0000,
  parameter int unsigned Bytes = 131072
) (
  input  logic                    clk_i,
  input  logic                    rst_ni,

  // AXI4 slave.
  input  logic                    ar_valid_i,
  output logic                    ar_ready_o,
  input  logic                    ar_id_i,
  input  logic [63:0]             ar_addr_i,
  input  logic [7:0]              ar_len_i,
  input  logic [2:0]              ar_size_i,
  input  logic [1:0]              ar_burst_i,
  input  logic [3:0]              ar_cache_i,
  input  logic [2:0]              ar_prot_i,
  output logic                    r_valid_o,
  input  logic                    r_ready_i,
  output logic                    r_id_o,
  output logic [63:0]             r_data_o,
  output logic [1:0]              r_resp_o,
  output logic                    r_last_o,
  input  logic                    aw_valid_i,
  output logic                    aw_ready_o,
  input  logic                    aw_id_i,
  input  logic [63:0]             aw_addr_i,
  input  logic [7:0]              aw_len_i,
  input  logic [2:0]              aw_size_i,
  input  logic [1:0]              aw_burst_i,
  input  logic [3:0]              aw_cache_i,
  input  logic [2:0]              aw_prot_i,
  input  logic                    w_valid_i,
  output logic                    w_ready_o,
  input  logic [63:0]             w_data_i,
  input  logic [7:0]              w_strb_i,
  input  logic                    w_last_i,
  output logic                    b_valid_o,
  input  logic                    b_ready_i,
  output logic                    b_id_o,
  output logic [1:0]              b_resp_o,

  // Word port: one access per granted request (the grant comes in the same cycle); read data
  // in the cycle after the grant, marked by host_rvalid_o. Word index within the window.
  input  logic                    host_req_i,
  output logic                    host_gnt_o,
  input  logic                    host_we_i,
  input  logic [$clog2(Bytes)-4:0] host_addr_i,
  input  logic [63:0]             host_wdata_i,
  input  logic [7:0]              host_wstrb_i,
  output logic                    host_rvalid_o,
  output logic [63:0]             host_rdata_o
);

  localparam int unsigned AddrBits = $clog2(Bytes);
  localparam int unsigned WordW    = AddrBits - 3;
  localparam logic [63:0] BaseTag  = 64'(Base) >> AddrBits;
  localparam logic [1:0]  RespOkay = 2'b00;
  localparam logic [1:0]  RespSlv  = 2'b10;
  localparam logic [1:0]  RespDec  = 2'b11;
  localparam int unsigned RdDepth  = 4;

  if (Bytes < 16 || (64'd1 << AddrBits) != 64'(Bytes)) begin : g_bad_bytes
    $error("nmsa_axi_ram: Bytes must be a power of two of at least 16");
  end
  if (Base % Bytes != 0) begin : g_bad_base
    $error("nmsa_axi_ram: Base must be a multiple of Bytes");
  end

  function automatic logic in_window(logic [63:0] addr);
    in_window = (addr >> AddrBits) == BaseTag;
  endfunction

  // The worse of two responses (DECERR > SLVERR > OKAY, which is the order of their codes).
  function automatic logic [1:0] worse(logic [1:0] a, logic [1:0] b);
    worse = a > b ? a : b;
  endfunction

  // ---------------------------------------------------------------------------------------------
  // Read bursts
  // ---------------------------------------------------------------------------------------------
  logic             rd_active_d, rd_active_q, rd_id_d, rd_id_q, rd_in_d, rd_in_q;
  logic             rd_bad_d, rd_bad_q;
  logic [7:0]       rd_left_d, rd_left_q;
  logic [WordW-1:0] rd_off_d, rd_off_q;
  logic             rd_ok, credit_ok, rd_want, rd_gnt, rd_issue;

  // The beat issued last cycle, whose data the memory presents now.
  logic             pend_d, pend_q, pend_id_d, pend_id_q, pend_last_d, pend_last_q;
  logic             pend_ram_d, pend_ram_q;
  logic [1:0]       pend_resp_d, pend_resp_q;

  logic             fifo_in_ready;
  logic [2:0]       fifo_count;
  logic [63:0]      ram_rdata;

  assign rd_ok     = !rd_bad_q && rd_in_q;
  // A beat may be issued only if the FIFO will have room for it and the one still pending.
  assign credit_ok = 4'(fifo_count) + 4'(pend_q) < 4'(RdDepth);
  assign rd_want   = rd_active_q && credit_ok && rd_ok;
  assign rd_issue  = rd_active_q && credit_ok && (!rd_ok || rd_gnt);
  assign ar_ready_o = !rd_active_q;

  always_comb begin
    rd_active_d = rd_active_q;
    rd_id_d     = rd_id_q;
    rd_in_d     = rd_in_q;
    rd_bad_d    = rd_bad_q;
    rd_left_d   = rd_left_q;
    rd_off_d    = rd_off_q;
    pend_d      = rd_issue;
    pend_id_d   = rd_id_q;
    pend_last_d = rd_left_q == '0;
    pend_ram_d  = rd_gnt;
    pend_resp_d = rd_bad_q ? RespSlv : !rd_in_q ? RespDec : RespOkay;
    if (ar_valid_i && ar_ready_o) begin
      rd_active_d = 1'b1;
      rd_id_d     = ar_id_i;
      rd_in_d     = in_window(ar_addr_i);
      rd_bad_d    = ar_burst_i != 2'b01 || ar_size_i != 3'd3;
      rd_left_d   = ar_len_i;
      rd_off_d    = ar_addr_i[AddrBits-1:3];
    end else if (rd_issue) begin
      rd_active_d = rd_left_q != '0;
      rd_left_d   = rd_left_q - 1'b1;
      rd_off_d    = rd_off_q + 1'b1;
      // Past the last word of the window every further beat is outside it.
      if (rd_off_q == '1) rd_in_d = 1'b0;
    end
  end

  nmsa_fifo #(.Width (64 + 4), .Depth (RdDepth)) u_r_fifo (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .flush_i     (1'b0),
    .in_valid_i  (pend_q),
    .in_ready_o  (fifo_in_ready),
    .in_data_i   ({pend_id_q, pend_last_q, pend_resp_q, pend_ram_q ? ram_rdata : 64'd0}),
    .out_valid_o (r_valid_o),
    .out_ready_i (r_ready_i),
    .out_data_o  ({r_id_o, r_last_o, r_resp_o, r_data_o}),
    .count_o     (fifo_count)
  );

  // ---------------------------------------------------------------------------------------------
  // Write bursts
  // ---------------------------------------------------------------------------------------------
  logic             wr_active_d, wr_active_q, wr_id_d, wr_id_q, wr_in_d, wr_in_q;
  logic             wr_bad_d, wr_bad_q;
  logic [7:0]       wr_left_d, wr_left_q;
  logic [WordW-1:0] wr_off_d, wr_off_q;
  logic [1:0]       wr_resp_d, wr_resp_q;
  logic             b_valid_d, b_valid_q, b_id_d, b_id_q;
  logic [1:0]       b_resp_d, b_resp_q;
  logic             wr_ok, wr_want, wr_gnt, w_hs;

  assign wr_ok      = !wr_bad_q && wr_in_q;
  assign wr_want    = wr_active_q && w_valid_i && wr_ok;
  assign w_ready_o  = wr_active_q && (!wr_ok || wr_gnt);
  assign w_hs       = w_valid_i && w_ready_o;
  assign aw_ready_o = !wr_active_q && !b_valid_q;

  always_comb begin
    wr_active_d = wr_active_q;
    wr_id_d     = wr_id_q;
    wr_in_d     = wr_in_q;
    wr_bad_d    = wr_bad_q;
    wr_left_d   = wr_left_q;
    wr_off_d    = wr_off_q;
    wr_resp_d   = wr_resp_q;
    b_valid_d   = b_valid_q && !b_ready_i;
    b_id_d      = b_id_q;
    b_resp_d    = b_resp_q;
    if (aw_valid_i && aw_ready_o) begin
      wr_active_d = 1'b1;
      wr_id_d     = aw_id_i;
      wr_in_d     = in_window(aw_addr_i);
      wr_bad_d    = aw_burst_i != 2'b01 || aw_size_i != 3'd3;
      wr_left_d   = aw_len_i;
      wr_off_d    = aw_addr_i[AddrBits-1:3];
      wr_resp_d   = RespOkay;
    end else if (w_hs) begin
      wr_left_d = wr_left_q - 1'b1;
      wr_off_d  = wr_off_q + 1'b1;
      if (wr_off_q == '1) wr_in_d = 1'b0;
      wr_resp_d = worse(wr_resp_q, wr_bad_q ? RespSlv : !wr_in_q ? RespDec : RespOkay);
      if (wr_left_q == '0) begin
        wr_active_d = 1'b0;
        b_valid_d   = 1'b1;
        b_id_d      = wr_id_q;
        b_resp_d    = wr_resp_d;
      end
    end
  end

  assign b_valid_o = b_valid_q;
  assign b_id_o    = b_id_q;
  assign b_resp_o  = b_resp_q;

  // ---------------------------------------------------------------------------------------------
  // The memory port
  // ---------------------------------------------------------------------------------------------
  logic prefer_rd_d, prefer_rd_q, host_rvalid_q;

  assign host_gnt_o  = host_req_i;
  assign rd_gnt      = !host_req_i && rd_want && (!wr_want || prefer_rd_q);
  assign wr_gnt      = !host_req_i && wr_want && !rd_gnt;
  assign prefer_rd_d = rd_gnt ? 1'b0 : wr_gnt ? 1'b1 : prefer_rd_q;

  nmsa_sp_ram #(.Words (Bytes / 8), .DataW (64)) u_ram (
    .clk_i   (clk_i),
    .en_i    (host_req_i || rd_gnt || wr_gnt),
    .we_i    (host_req_i ? host_we_i : wr_gnt),
    .addr_i  (host_req_i ? host_addr_i : rd_gnt ? rd_off_q : wr_off_q),
    .wdata_i (host_req_i ? host_wdata_i : w_data_i),
    .wstrb_i (host_req_i ? host_wstrb_i : w_strb_i),
    .rdata_o (ram_rdata)
  );

  assign host_rvalid_o = host_rvalid_q;
  assign host_rdata_o  = ram_rdata;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rd_active_q   <= 1'b0;
      rd_id_q       <= 1'b0;
      rd_in_q       <= 1'b0;
      rd_bad_q      <= 1'b0;
      rd_left_q     <= '0;
      rd_off_q      <= '0;
      pend_q        <= 1'b0;
      pend_id_q     <= 1'b0;
      pend_last_q   <= 1'b0;
      pend_ram_q    <= 1'b0;
      pend_resp_q   <= RespOkay;
      wr_active_q   <= 1'b0;
      wr_id_q       <= 1'b0;
      wr_in_q       <= 1'b0;
      wr_bad_q      <= 1'b0;
      wr_left_q     <= '0;
      wr_off_q      <= '0;
      wr_resp_q     <= RespOkay;
      b_valid_q     <= 1'b0;
      b_id_q        <= 1'b0;
      b_resp_q      <= RespOkay;
      prefer_rd_q   <= 1'b1;
      host_rvalid_q <= 1'b0;
    end else begin
      rd_active_q   <= rd_active_d;
      rd_id_q       <= rd_id_d;
      rd_in_q       <= rd_in_d;
      rd_bad_q      <= rd_bad_d;
      rd_left_q     <= rd_left_d;
      rd_off_q      <= rd_off_d;
      pend_q        <= pend_d;
      pend_id_q     <= pend_id_d;
      pend_last_q   <= pend_last_d;
      pend_ram_q    <= pend_ram_d;
      pend_resp_q   <= pend_resp_d;
      wr_active_q   <= wr_active_d;
      wr_id_q       <= wr_id_d;
      wr_in_q       <= wr_in_d;
      wr_bad_q      <= wr_bad_d;
      wr_left_q     <= wr_left_d;
      wr_off_q      <= wr_off_d;
      wr_resp_q     <= wr_resp_d;
      b_valid_q     <= b_valid_d;
      b_id_q        <= b_id_d;
      b_resp_q      <= b_resp_d;
      prefer_rd_q   <= prefer_rd_d;
      host_rvalid_q <= host_req_i && !host_we_i;
    end
  end

  // Cache and protection attributes mean nothing to an on-chip RAM.
  logic unused;
  assign unused = ^{ar_cache_i, ar_prot_i, aw_cache_i, aw_prot_i, ar_addr_i[2:0], aw_addr_i[2:0]};

  // ---------------------------------------------------------------------------------------------
  // Assertions (simulation with --assert; Yosys synthesis defines SYNTHESIS).
  // ---------------------------------------------------------------------------------------------
`ifndef SYNTHESIS
  always @(posedge clk_i or negedge rst_ni) begin
    if (rst_ni) begin
      // The credit check keeps the FIFO from ever refusing the pending beat.
      if (pend_q) begin
        assert (fifo_in_ready);
      end
      // WLAST marks exactly the last beat of the burst its AW announced.
      if (w_hs) begin
        assert (w_last_i == (wr_left_q == '0));
      end
      // One memory access per cycle.
      assert (32'(host_req_i) + 32'(rd_gnt) + 32'(wr_gnt) <= 1);
    end
  end

  logic past_ok_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      past_ok_q <= 1'b0;
    end else begin
      past_ok_q <= 1'b1;
    end
  end

  always @(posedge clk_i) begin
    if (past_ok_q) begin
      // The master holds each request and write beat steady until it is taken.
      if ($past(ar_valid_i && !ar_ready_o)) begin
        assert (ar_valid_i && $stable(ar_addr_i) && $stable(ar_len_i) && $stable(ar_id_i));
      end
      if ($past(aw_valid_i && !aw_ready_o)) begin
        assert (aw_valid_i && $stable(aw_addr_i) && $stable(aw_len_i) && $stable(aw_id_i));
      end
      if ($past(w_valid_i && !w_ready_o)) begin
        assert (w_valid_i && $stable(w_data_i) && $stable(w_strb_i) && $stable(w_last_i));
      end
    end
  end
`endif

endmodule

`default_nettype wire
