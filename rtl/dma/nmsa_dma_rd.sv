// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// DMA read engine: an AXI4 master that reads 2-D strided regions of host memory and delivers
// their beats in order on a valid/ready stream.
//
// A request reads `rows` rows of `row_bytes` bytes, row i starting at addr + i*stride. Each row is
// split into INCR bursts of full-width beats, at most MaxBurstBeats long, that never cross a
// 4 KiB boundary. Up to MaxOutstanding bursts are in flight (AR issued, last R beat not yet
// delivered); the slave answers in order (one ID). The R channel is passed straight through to
// the consumer (r_ready_o = rd_ready_i), so consumer back-pressure reaches the slave and a beat's
// RRESP travels with it: the engine never stops on an error, the caller decides.
//
// A new request is accepted as soon as every burst of the current one has been issued, so
// requests pipeline behind each other on the R channel. The caller guarantees the request rules
// (addr, row_bytes and stride multiples of AxiDataW/8; row_bytes and rows nonzero); the assertions
// below check them in simulation.
//
// Timing: AR payload and ar_valid_o come from registers; the R path is combinational
// (r_* -> rd_*), plus rd_last_o from registers.
`default_nettype none

module nmsa_dma_rd #(
  parameter int unsigned AddrW          = 64,
  parameter int unsigned AxiDataW       = 64,
  parameter int unsigned LenW           = 16,
  parameter int unsigned MaxBurstBeats  = 16,
  parameter int unsigned MaxOutstanding = 4
) (
  input  logic             clk_i,
  input  logic             rst_ni,

  // Request: `rows` rows of `row_bytes` bytes, row i at addr + i*stride.
  input  logic             req_valid_i,
  output logic             req_ready_o,
  input  logic [AddrW-1:0] req_addr_i,
  input  logic [LenW-1:0]  req_row_bytes_i,
  input  logic [LenW-1:0]  req_rows_i,
  input  logic [AddrW-1:0] req_stride_i,
  // The requester withdraws a request not yet accepted (nmsa_top: on an abort, so that nothing
  // new reaches the bus after an error). Only the request checks read it: withdrawing is safe
  // because nothing is taken from a request before its handshake.
  input  logic             req_cancel_i,

  // Data beats in request order, row after row; rd_last_o marks a request's last beat.
  output logic             rd_valid_o,
  input  logic             rd_ready_i,
  output logic [AxiDataW-1:0] rd_data_o,
  output logic [1:0]       rd_resp_o,
  output logic             rd_last_o,

  // AXI4 master, read channels.
  output logic             ar_valid_o,
  input  logic             ar_ready_i,
  output logic             ar_id_o,
  output logic [AddrW-1:0] ar_addr_o,
  output logic [7:0]       ar_len_o,
  output logic [2:0]       ar_size_o,
  output logic [1:0]       ar_burst_o,
  output logic [3:0]       ar_cache_o,
  output logic [2:0]       ar_prot_o,
  input  logic             r_valid_i,
  output logic             r_ready_o,
  input  logic             r_id_i,
  input  logic [AxiDataW-1:0] r_data_i,
  input  logic [1:0]       r_resp_i,
  input  logic             r_last_i,

  output logic             busy_o
);

  localparam int unsigned BeatBytes = AxiDataW / 8;
  localparam int unsigned BeatOff   = $clog2(BeatBytes);

  if (AxiDataW < 32 || AxiDataW > 1024 || (AxiDataW & (AxiDataW - 1)) != 0) begin : g_bad_dataw
    $error("nmsa_dma_rd: AxiDataW must be a power of two in [32, 1024]");
  end
  if (AddrW < 13 || AddrW > 64) begin : g_bad_addrw
    $error("nmsa_dma_rd: AddrW must be in [13, 64]");
  end
  if (LenW <= BeatOff || LenW > 32) begin : g_bad_lenw
    $error("nmsa_dma_rd: LenW must be in (log2(AxiDataW/8), 32]");
  end
  if (MaxBurstBeats < 1 || MaxBurstBeats > 256) begin : g_bad_burst
    $error("nmsa_dma_rd: MaxBurstBeats must be in [1, 256] (AXI4 INCR)");
  end
  if (MaxOutstanding < 1 || MaxOutstanding > 64) begin : g_bad_outstanding
    $error("nmsa_dma_rd: MaxOutstanding must be in [1, 64]");
  end

  // ---------------------------------------------------------------------------------------------
  // Burst generator: walks the rows of the current request; one AR per burst.
  // ---------------------------------------------------------------------------------------------
  logic             burst_valid, burst_last, ar_hs, fifo_full;
  logic [AddrW-1:0] burst_addr;
  logic [7:0]       burst_len;
  logic [BeatOff-1:0] burst_lane;    // narrow rows only (write engine)
  logic [AxiDataW/8-1:0] burst_strb;

  nmsa_burst_gen #(
    .AddrW        (AddrW),
    .AxiDataW     (AxiDataW),
    .LenW         (LenW),
    .MaxBurstBeats(MaxBurstBeats),
    .Narrow       (1'b0)
  ) u_burst_gen (
    .clk_i,
    .rst_ni,
    .req_valid_i,
    .req_ready_o,
    .req_addr_i,
    .req_row_bytes_i,
    .req_rows_i,
    .req_stride_i,
    .burst_valid_o(burst_valid),
    .burst_take_i (ar_hs),
    .burst_addr_o (burst_addr),
    .burst_len_o  (burst_len),
    .burst_last_o (burst_last),
    .burst_lane_o (burst_lane),
    .burst_strb_o (burst_strb)
  );

  // ar_valid_o holds until the handshake: nothing but this handshake fills the FIFO or moves the
  // generator on.
  assign ar_valid_o = burst_valid & ~fifo_full;
  assign ar_hs      = ar_valid_o & ar_ready_i;
  assign ar_id_o    = 1'b0;
  assign ar_addr_o  = burst_addr;
  assign ar_len_o   = burst_len;
  assign ar_size_o  = 3'(BeatOff);
  assign ar_burst_o = 2'b01;    // INCR
  assign ar_cache_o = 4'b0011;  // normal, non-cacheable, bufferable
  assign ar_prot_o  = 3'b000;   // unprivileged, secure, data

  // ---------------------------------------------------------------------------------------------
  // Bursts in flight: one entry per issued AR (its length and whether it ends a request), popped
  // when its last beat is delivered. The FIFO's head is a register, so rd_last_o is a compare of
  // two registers away from a flop.
  // ---------------------------------------------------------------------------------------------
  localparam int unsigned FifoDepth = MaxOutstanding < 2 ? 2 : 1 << $clog2(MaxOutstanding);
  localparam int unsigned CntW      = $clog2(FifoDepth) + 1;

  logic [7:0]                  beat_d, beat_q;     // beat index within the head burst
  logic [7:0]                  head_len;
  logic                        head_last, head_valid, fifo_empty, fifo_room, burst_done, r_hs;
  logic [CntW-1:0]             fifo_count;

  nmsa_fifo #(.Width (9), .Depth (FifoDepth)) u_bursts (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .flush_i     (1'b0),
    .in_valid_i  (ar_hs),
    .in_ready_o  (fifo_room),
    .in_data_i   ({burst_last, ar_len_o}),
    .out_valid_o (head_valid),
    .out_ready_i (r_hs && burst_done),
    .out_data_o  ({head_last, head_len}),
    .count_o     (fifo_count)
  );

  assign fifo_full  = fifo_count == CntW'(MaxOutstanding);   // MaxOutstanding <= FifoDepth
  assign fifo_empty = ~head_valid;
  assign burst_done = beat_q == head_len;

  assign r_ready_o  = rd_ready_i;
  assign r_hs       = r_valid_i & r_ready_o;
  assign rd_valid_o = r_valid_i;
  assign rd_data_o  = r_data_i;
  assign rd_resp_o  = r_resp_i;
  assign rd_last_o  = head_valid & head_last & burst_done;

  // The engine counts beats itself; r_last_i is only checked (below), never trusted.
  always_comb begin
    beat_d = beat_q;
    if (r_hs && head_valid) begin
      beat_d = burst_done ? '0 : beat_q + 8'd1;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      beat_q <= '0;
    end else begin
      beat_q <= beat_d;
    end
  end

  assign busy_o = burst_valid | ~fifo_empty;

  // Narrow rows are the write engine's; the FIFO is deeper than MaxOutstanding when that is not a
  // power of two, and fifo_full is what limits it.
  logic unused;
  assign unused = ^{burst_lane, burst_strb, fifo_room};

  // ---------------------------------------------------------------------------------------------
  // Assertions (simulation with --assert, and Yosys -formal; Yosys synthesis defines SYNTHESIS).
  // ---------------------------------------------------------------------------------------------
`ifndef SYNTHESIS
  localparam logic [AddrW-1:0] BeatMask = {{(AddrW - BeatOff){1'b0}}, {BeatOff{1'b1}}};

  logic req_hs;
  assign req_hs = req_valid_i & req_ready_o;

  // Checks of this cycle's signals, at every clock edge out of reset. The process has the
  // shape of an asynchronously reset one so that rst_ni stays a purely asynchronous signal.
  always @(posedge clk_i or negedge rst_ni) begin
    if (rst_ni) begin
      // Request rules (the caller validates): nonzero sizes, beat-aligned address, row and stride.
      if (req_hs) begin
        assert (req_rows_i != '0);
        assert (req_row_bytes_i != '0);
        assert ((req_addr_i & BeatMask) == '0);
        assert ((AddrW'(req_row_bytes_i) & BeatMask) == '0);
        assert ((req_stride_i & BeatMask) == '0);
      end
      // The slave answers only bursts in flight, with our ID, and RLAST on their last beat.
      if (r_valid_i) begin
        assert (!fifo_empty);
        assert (r_id_i == 1'b0);
        assert (r_last_i == burst_done);
      end
    end
  end

  // Checks over two cycles, from the second clock edge after reset on (Yosys accepts $past only
  // in a plain clocked process, hence the registered enable).
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
      // The requester holds a request steady until accepted, or withdraws it with req_cancel_i.
      if ($past(req_valid_i && !req_ready_o) && !req_cancel_i) begin
        assert (req_valid_i);
        assert ($stable(req_addr_i) && $stable(req_row_bytes_i) && $stable(req_rows_i) &&
                $stable(req_stride_i));
      end
      // AR holds valid and payload until accepted.
      if ($past(ar_valid_o && !ar_ready_i)) begin
        assert (ar_valid_o);
        assert ($stable(ar_addr_o) && $stable(ar_len_o));
      end
      // The slave holds an R beat steady until accepted.
      if ($past(r_valid_i && !r_ready_o)) begin
        assert (r_valid_i);
        assert ($stable(r_data_i) && $stable(r_resp_i) && $stable(r_last_i));
      end
    end
  end
`endif

endmodule

`default_nettype wire
