// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// DMA write engine: an AXI4 master that writes a stream of beats to 2-D strided regions of host
// memory and reports one completion per request with the worst write response.
//
// A request writes `rows` rows of `row_bytes` bytes, row i starting at addr + i*stride; the data
// arrives on the wr_* stream, row after row. Two kinds of rows:
//   - full rows (row_bytes >= AxiDataW/8): addr, row_bytes and stride are multiples of AxiDataW/8; each
//     row is split into INCR bursts of at most MaxBurstBeats full-strobe beats that never cross a
//     4 KiB boundary;
//   - narrow rows (row_bytes < AxiDataW/8): each row is exactly one stream beat whose low row_bytes
//     bytes are the data. The engine writes it as a one-beat burst to the beat-aligned address,
//     shifted to the byte lane of the row's address, with WSTRB covering only the row. No row may
//     straddle a beat: (row address % (AxiDataW/8)) + row_bytes <= AxiDataW/8 for every row, and stride
//     is a multiple of row_bytes. (The first condition on addr alone is not enough: 2-byte rows
//     from lane 3 with stride 2 reach lane 8 on the third row; the assertions check each row.)
//
// Up to MaxOutstanding bursts await their B response. W beats of a burst go out only after its
// AW was issued, in AW order; the wr_* stream is passed through to W (wr_ready_o = w_ready_i while
// a burst has W beats pending). When the last B response of a request arrives, cpl_valid_o pulses
// for one cycle (one cycle later) with the worst BRESP of the request (DECERR > SLVERR > OKAY).
// A new request is accepted as soon as every AW of the current one has been issued.
//
// busy_o: a request was accepted and its completion pulse has not finished.
`default_nettype none

module nmsa_dma_wr #(
  parameter int unsigned AddrW          = 64,
  parameter int unsigned AxiDataW       = 64,
  parameter int unsigned LenW           = 16,
  parameter int unsigned MaxBurstBeats  = 16,
  parameter int unsigned MaxOutstanding = 4
) (
  input  logic               clk_i,
  input  logic               rst_ni,

  // Request: `rows` rows of `row_bytes` bytes, row i at addr + i*stride.
  input  logic               req_valid_i,
  output logic               req_ready_o,
  input  logic [AddrW-1:0]   req_addr_i,
  input  logic [LenW-1:0]    req_row_bytes_i,
  input  logic [LenW-1:0]    req_rows_i,
  input  logic [AddrW-1:0]   req_stride_i,
  // The requester withdraws a request not yet accepted (nmsa_top: on an abort, so that nothing
  // new reaches the bus after an error). Only the request checks read it: withdrawing is safe
  // because nothing is taken from a request before its handshake.
  input  logic               req_cancel_i,

  // Data beats in request order, row after row (one beat per narrow row, data in its low bytes).
  input  logic               wr_valid_i,
  output logic               wr_ready_o,
  input  logic [AxiDataW-1:0]   wr_data_i,

  // One pulse per request once all its B responses arrived, with the worst of them.
  output logic               cpl_valid_o,
  output logic [1:0]         cpl_resp_o,

  // AXI4 master, write channels.
  output logic               aw_valid_o,
  input  logic               aw_ready_i,
  output logic               aw_id_o,
  output logic [AddrW-1:0]   aw_addr_o,
  output logic [7:0]         aw_len_o,
  output logic [2:0]         aw_size_o,
  output logic [1:0]         aw_burst_o,
  output logic [3:0]         aw_cache_o,
  output logic [2:0]         aw_prot_o,
  output logic               w_valid_o,
  input  logic               w_ready_i,
  output logic [AxiDataW-1:0]   w_data_o,
  output logic [AxiDataW/8-1:0] w_strb_o,
  output logic               w_last_o,
  input  logic               b_valid_i,
  output logic               b_ready_o,
  input  logic               b_id_i,
  input  logic [1:0]         b_resp_i,

  output logic               busy_o
);

  localparam int unsigned BeatBytes = AxiDataW / 8;
  localparam int unsigned BeatOff   = $clog2(BeatBytes);
  localparam int unsigned PtrW      = MaxOutstanding > 1 ? $clog2(MaxOutstanding) : 1;
  localparam int unsigned CntW      = $clog2(MaxOutstanding + 1);
  // What the W channel needs of a burst: length, write strobes, byte lane of a narrow row.
  localparam int unsigned EntryW    = 8 + BeatBytes + BeatOff;

  if (AxiDataW < 32 || AxiDataW > 1024 || (AxiDataW & (AxiDataW - 1)) != 0) begin : g_bad_dataw
    $error("nmsa_dma_wr: AxiDataW must be a power of two in [32, 1024]");
  end
  if (AddrW < 13 || AddrW > 64) begin : g_bad_addrw
    $error("nmsa_dma_wr: AddrW must be in [13, 64]");
  end
  if (LenW <= BeatOff || LenW > 32) begin : g_bad_lenw
    $error("nmsa_dma_wr: LenW must be in (log2(AxiDataW/8), 32]");
  end
  if (MaxBurstBeats < 1 || MaxBurstBeats > 256) begin : g_bad_burst
    $error("nmsa_dma_wr: MaxBurstBeats must be in [1, 256] (AXI4 INCR)");
  end
  if (MaxOutstanding < 1 || MaxOutstanding > 64) begin : g_bad_outstanding
    $error("nmsa_dma_wr: MaxOutstanding must be in [1, 64]");
  end

  // ---------------------------------------------------------------------------------------------
  // Burst generator: walks the rows of the current request; one AW per burst.
  // ---------------------------------------------------------------------------------------------
  logic                 burst_valid, burst_last, aw_hs, fifo_full;
  logic [AddrW-1:0]     burst_addr;
  logic [7:0]           burst_len;
  logic [BeatOff-1:0]   lane;
  logic [BeatBytes-1:0] strb;

  nmsa_burst_gen #(
    .AddrW        (AddrW),
    .AxiDataW     (AxiDataW),
    .LenW         (LenW),
    .MaxBurstBeats(MaxBurstBeats),
    .Narrow       (1'b1)
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
    .burst_take_i (aw_hs),
    .burst_addr_o (burst_addr),
    .burst_len_o  (burst_len),
    .burst_last_o (burst_last),
    .burst_lane_o (lane),
    .burst_strb_o (strb)
  );

  // aw_valid_o holds until the handshake: nothing but this handshake fills the FIFO or moves the
  // generator on.
  assign aw_valid_o = burst_valid & ~fifo_full;
  assign aw_hs      = aw_valid_o & aw_ready_i;
  assign aw_id_o    = 1'b0;
  assign aw_addr_o  = burst_addr;
  assign aw_len_o   = burst_len;
  assign aw_size_o  = 3'(BeatOff);
  assign aw_burst_o = 2'b01;    // INCR
  assign aw_cache_o = 4'b0011;  // normal, non-cacheable, bufferable
  assign aw_prot_o  = 3'b000;   // unprivileged, secure, data

  // ---------------------------------------------------------------------------------------------
  // Bursts awaiting W beats or a B response: one entry per issued AW, with two read pointers.
  // Entries [w_ptr, wr_ptr) still send W beats, entries [b_ptr, w_ptr) wait for their B. The
  // entry at w_ptr (the burst whose W beats go out) is also kept in a register, w_entry_q, so the
  // W data's lane shift starts at a flip-flop instead of behind the FIFO's read multiplexer.
  // ---------------------------------------------------------------------------------------------
  logic [MaxOutstanding*EntryW-1:0] fifo_d, fifo_q;
  logic [MaxOutstanding-1:0]        fifo_last_d, fifo_last_q;  // burst ends its request
  logic [PtrW-1:0]                  wr_ptr_d, wr_ptr_q, w_ptr_d, w_ptr_q, b_ptr_d, b_ptr_q;
  logic [CntW-1:0]                  b_cnt_d, b_cnt_q;   // entries awaiting B (all entries)
  logic [CntW-1:0]                  w_cnt_d, w_cnt_q;   // entries with W beats pending
  logic [7:0]                       beat_d, beat_q;     // beat index within the W head burst
  logic [EntryW-1:0]                push_entry, w_entry;
  logic [EntryW-1:0]                w_entry_d, w_entry_q, w_next_entry;
  logic [PtrW-1:0]                  w_next_ptr;
  logic [7:0]                       w_len;
  logic [BeatBytes-1:0]             w_strb;
  logic [BeatOff-1:0]               w_lane;
  logic                             b_last;
  logic                             w_pending, w_hs, b_hs;

  assign push_entry = {lane, strb, aw_len_o};
  assign w_entry    = w_entry_q;
  assign w_next_ptr = (w_ptr_q == PtrW'(MaxOutstanding - 1)) ? '0 : w_ptr_q + PtrW'(1);
  // The entry behind the W head: in the FIFO, or (with only the head pending) the one pushed now.
  assign w_next_entry = w_cnt_q == CntW'(1) ? push_entry : fifo_q[w_next_ptr*EntryW +: EntryW];
  assign w_len      = w_entry[7:0];
  assign w_strb     = w_entry[8 +: BeatBytes];
  assign w_lane     = w_entry[8 + BeatBytes +: BeatOff];
  assign b_last     = fifo_last_q[b_ptr_q];

  assign fifo_full = b_cnt_q == CntW'(MaxOutstanding);
  assign w_pending = w_cnt_q != '0;

  // W is the wr_* stream, gated until its burst's AW has been issued.
  assign w_valid_o  = wr_valid_i & w_pending;
  assign wr_ready_o = w_ready_i & w_pending;
  assign w_hs       = w_valid_o & w_ready_i;
  assign w_data_o   = wr_data_i << {w_lane, 3'b000};
  assign w_strb_o   = w_strb;
  assign w_last_o   = beat_q == w_len;

  // A B response is taken only for a burst whose W beats are all out; anything else would be a
  // slave protocol error (asserted below) and must not corrupt the bookkeeping.
  assign b_ready_o = 1'b1;
  assign b_hs      = b_valid_i & (b_cnt_q != w_cnt_q);

  always_comb begin
    fifo_d      = fifo_q;
    fifo_last_d = fifo_last_q;
    wr_ptr_d = wr_ptr_q;
    w_ptr_d  = w_ptr_q;
    b_ptr_d  = b_ptr_q;
    b_cnt_d  = b_cnt_q;
    w_cnt_d  = w_cnt_q;
    beat_d   = beat_q;
    // With no W burst pending the head is the entry pushed now (wr_ptr_q equals w_ptr_q then).
    w_entry_d = w_pending ? w_entry_q : push_entry;
    if (aw_hs) begin
      fifo_d[wr_ptr_q*EntryW +: EntryW] = push_entry;
      fifo_last_d[wr_ptr_q]             = burst_last;
      wr_ptr_d = (wr_ptr_q == PtrW'(MaxOutstanding - 1)) ? '0 : wr_ptr_q + PtrW'(1);
      b_cnt_d  = b_cnt_d + CntW'(1);
      w_cnt_d  = w_cnt_d + CntW'(1);
    end
    if (w_hs) begin
      if (w_last_o) begin
        beat_d    = '0;
        w_ptr_d   = w_next_ptr;
        w_entry_d = w_next_entry;
        w_cnt_d = w_cnt_d - CntW'(1);
      end else begin
        beat_d = beat_q + 8'd1;
      end
    end
    if (b_hs) begin
      b_ptr_d = (b_ptr_q == PtrW'(MaxOutstanding - 1)) ? '0 : b_ptr_q + PtrW'(1);
      b_cnt_d = b_cnt_d - CntW'(1);
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      wr_ptr_q <= '0;
      w_ptr_q  <= '0;
      b_ptr_q  <= '0;
      b_cnt_q  <= '0;
      w_cnt_q  <= '0;
      beat_q   <= '0;
    end else begin
      wr_ptr_q <= wr_ptr_d;
      w_ptr_q  <= w_ptr_d;
      b_ptr_q  <= b_ptr_d;
      b_cnt_q  <= b_cnt_d;
      w_cnt_q  <= w_cnt_d;
      beat_q   <= beat_d;
    end
  end

  // Entries are qualified by the counts.
  always_ff @(posedge clk_i) begin
    fifo_q      <= fifo_d;
    fifo_last_q <= fifo_last_d;
    w_entry_q   <= w_entry_d;
  end

  // ---------------------------------------------------------------------------------------------
  // Completion: the worst response over the request's bursts, reported after its last B.
  // EXOKAY cannot occur (no exclusive accesses) and ranks as OKAY.
  // ---------------------------------------------------------------------------------------------
  logic [1:0] b_rank, worst_d, worst_q, cpl_resp_d, cpl_resp_q;
  logic       cpl_valid_d, cpl_valid_q;

  assign b_rank = {b_resp_i[1], b_resp_i[1] & b_resp_i[0]};
  assign cpl_resp_d = b_rank > worst_q ? b_rank : worst_q;

  always_comb begin
    worst_d     = worst_q;
    cpl_valid_d = 1'b0;
    if (b_hs) begin
      worst_d     = b_last ? 2'b00 : cpl_resp_d;
      cpl_valid_d = b_last;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      worst_q     <= 2'b00;
      cpl_valid_q <= 1'b0;
      cpl_resp_q  <= 2'b00;
    end else begin
      worst_q     <= worst_d;
      cpl_valid_q <= cpl_valid_d;
      cpl_resp_q  <= cpl_resp_d;
    end
  end

  assign cpl_valid_o = cpl_valid_q;
  assign cpl_resp_o  = cpl_resp_q;
  assign busy_o      = burst_valid | (b_cnt_q != '0) | cpl_valid_q;

  // ---------------------------------------------------------------------------------------------
  // Assertions (simulation with --assert, and Yosys -formal; Yosys synthesis defines SYNTHESIS).
  // ---------------------------------------------------------------------------------------------
`ifndef SYNTHESIS
  localparam logic [AddrW-1:0] BeatMask = {{(AddrW - BeatOff){1'b0}}, {BeatOff{1'b1}}};

  logic req_hs, req_narrow;
  assign req_hs     = req_valid_i & req_ready_o;
  assign req_narrow = req_row_bytes_i < LenW'(BeatBytes);

  // Checks of this cycle's signals, at every clock edge out of reset. The process has the
  // shape of an asynchronously reset one so that rst_ni stays a purely asynchronous signal.
  always @(posedge clk_i or negedge rst_ni) begin
    if (rst_ni) begin
      // Request rules (the caller validates).
      if (req_hs) begin
        assert (req_rows_i != '0);
        assert (req_row_bytes_i != '0);
        if (req_narrow) begin
          // Narrow: the first row fits in its beat, and stride keeps whole rows.
          assert (32'(req_addr_i[BeatOff-1:0]) + 32'(req_row_bytes_i) <= BeatBytes);
          assert ((req_stride_i % AddrW'(req_row_bytes_i)) == '0);
        end else begin
          assert ((req_addr_i & BeatMask) == '0);
          assert ((AddrW'(req_row_bytes_i) & BeatMask) == '0);
          assert ((req_stride_i & BeatMask) == '0);
        end
      end
      // The slave answers only bursts whose W beats are all out, with our ID.
      if (b_valid_i) begin
        assert (b_cnt_q != w_cnt_q);
        assert (b_id_i == 1'b0);
      end
      // Bursts with W pending are a subset of those awaiting B.
      assert (w_cnt_q <= b_cnt_q);
      // The W head's register holds the FIFO's entry at w_ptr.
      if (w_pending) begin
        assert (w_entry_q == fifo_q[w_ptr_q*EntryW +: EntryW]);
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
      // AW holds valid and payload until accepted.
      if ($past(aw_valid_o && !aw_ready_i)) begin
        assert (aw_valid_o);
        assert ($stable(aw_addr_o) && $stable(aw_len_o));
      end
      // The producer holds a beat steady until accepted, so W does too.
      if ($past(w_valid_o && !w_ready_i)) begin
        assert (w_valid_o);
        assert ($stable(w_data_o) && $stable(w_strb_o) && $stable(w_last_o));
      end
    end
  end
`endif

endmodule

`default_nettype wire
