// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Burst generator of the DMA engines: walks the rows of one 2-D request (`rows` rows of
// `row_bytes` bytes, row i at addr + i*stride) and offers one AXI4 INCR burst at a time, each at
// most MaxBurstBeats full-width beats long and never across a 4 KiB boundary. A burst is taken in
// the cycle burst_take_i is high, and the next one is offered in the next cycle, so an engine can
// issue a burst every cycle. A new request is accepted once every burst of the current one has
// been taken.
//
// With Narrow = 1 (the write engine), a row shorter than a beat is one one-beat burst to the
// beat-aligned address of the row, with the row's byte lane and write strobes (nmsa_dma_wr
// states the rules such rows follow).
//
// Timing: everything offered comes from registers; whether the burst stops at the boundary and
// whether it ends the row are registers too, computed with the state they describe, and the
// candidates of the next state are computed in parallel, so taking a burst only selects. The flags
// are compares side by side, never a compare against a selected or computed bound: "beats <=
// min(a, b)" is "beats <= a && beats <= b", and "near the boundary" is a compare of the address's
// beat within its page.
`default_nettype none

module nmsa_burst_gen #(
  parameter int unsigned AddrW         = 64,
  parameter int unsigned AxiDataW      = 64,
  parameter int unsigned LenW          = 16,
  parameter int unsigned MaxBurstBeats = 16,
  parameter bit          Narrow        = 1'b0
) (
  input  logic                    clk_i,
  input  logic                    rst_ni,

  input  logic                    req_valid_i,
  output logic                    req_ready_o,
  input  logic [AddrW-1:0]        req_addr_i,
  input  logic [LenW-1:0]         req_row_bytes_i,
  input  logic [LenW-1:0]         req_rows_i,
  input  logic [AddrW-1:0]        req_stride_i,

  output logic                    burst_valid_o,
  input  logic                    burst_take_i,
  output logic [AddrW-1:0]        burst_addr_o,   // beat-aligned
  output logic [7:0]              burst_len_o,    // beats - 1 (AxLEN)
  output logic                    burst_last_o,   // the request's last burst
  output logic [$clog2(AxiDataW/8)-1:0] burst_lane_o,  // a narrow row's first byte lane
  output logic [AxiDataW/8-1:0]   burst_strb_o    // a narrow row's strobes; all ones otherwise
);

  localparam int unsigned BeatBytes = AxiDataW / 8;
  localparam int unsigned BeatOff   = $clog2(BeatBytes);
  // Wide enough for beats left in a row (< 2^LenW), beats to the next 4 KiB boundary (<= 1024)
  // and twice MaxBurstBeats (<= 512).
  localparam int unsigned CmpW      = LenW > 13 ? LenW : 13;
  localparam int unsigned PageBeats = 4096 / BeatBytes;
  localparam int unsigned FirstCap  = PageBeats < MaxBurstBeats ? PageBeats : MaxBurstBeats;
  localparam logic [AddrW-1:0] BeatMask = {{(AddrW - BeatOff){1'b0}}, {BeatOff{1'b1}}};

  logic             active_d, active_q;
  logic             narrow_d, narrow_q;              // narrow rows (Narrow only)
  logic [AddrW-1:0] addr_d, addr_q;                  // beat-aligned address of the next burst
  logic [AddrW-1:0] row_addr_d, row_addr_q;          // start of the row (unaligned if narrow)
  logic [AddrW-1:0] next_row_d, next_row_q;          // row_addr + stride
  logic [AddrW-1:0] stride_d, stride_q;
  logic [LenW-1:0]  row_bytes_d, row_bytes_q;
  logic [LenW-1:0]  row_beats_d, row_beats_q;
  logic [LenW-1:0]  beats_left_d, beats_left_q;      // beats of the row not yet offered
  logic [LenW-1:0]  rows_left_d, rows_left_q;        // rows including the current one
  logic             last_row_d, last_row_q;          // rows_left_q == 1
  logic [12:0]      to4k_d, to4k_q;                  // beats from addr_q to the 4 KiB boundary
  logic [12:0]      next_to4k_d, next_to4k_q;        // ... from next_row_q's beat
  logic             boundary_d, boundary_q;          // to4k_q <= MaxBurstBeats
  logic             row_end_d, row_end_q;            // this burst ends the row

  logic [CmpW-1:0]  cap;
  logic             req_hs, req_narrow;
  logic [LenW-1:0]  req_row_beats;

  // Beats from an address to the next 4 KiB boundary (the address's beat, if unaligned).
  function automatic logic [12:0] beats_to_4k(logic [11:0] low);
    beats_to_4k = (13'd4096 - {1'b0, low & ~BeatMask[11:0]}) >> BeatOff;
  endfunction

  // beats_to_4k(low) <= MaxBurstBeats, from the address's beat within its page.
  function automatic logic near_4k(logic [11:0] low);
    near_4k = (32'(low) >> BeatOff) + MaxBurstBeats >= PageBeats;
  endfunction

  // beats <= beats_to_4k(low): the beats from the address's beat stay within its page.
  function automatic logic fits_page(logic [LenW-1:0] beats, logic [11:0] low);
    fits_page = 32'(beats) + (32'(low) >> BeatOff) <= PageBeats;
  endfunction

  assign req_ready_o   = ~active_q;
  assign req_hs        = req_valid_i & req_ready_o;
  assign req_narrow    = Narrow && req_row_bytes_i < LenW'(BeatBytes);
  assign req_row_beats = req_narrow ? LenW'(1) : req_row_bytes_i >> BeatOff;

  assign cap           = boundary_q ? CmpW'(to4k_q) : CmpW'(MaxBurstBeats);
  assign burst_valid_o = active_q;
  assign burst_addr_o  = addr_q;
  assign burst_len_o   = 8'((row_end_q ? CmpW'(beats_left_q) : cap) - CmpW'(1));
  assign burst_last_o  = row_end_q & last_row_q;

  if (Narrow) begin : g_narrow
    assign burst_lane_o = narrow_q ? row_addr_q[BeatOff-1:0] : '0;
    assign burst_strb_o = narrow_q ? ((BeatBytes'(1) << row_bytes_q[BeatOff-1:0]) -
                                      BeatBytes'(1)) << burst_lane_o
                                   : '1;
  end else begin : g_full
    assign burst_lane_o = '0;
    assign burst_strb_o = '1;
    logic unused;
    assign unused = ^{narrow_q, row_addr_q, row_bytes_q};
  end

  // Candidates of the next state, from registers only.
  logic [AddrW-1:0] addr_page, addr_max, next_row_next, req_next_row;
  logic             next_boundary, next_row_end, mid_boundary, mid_row_end, mid_row_end_page;

  assign addr_page     = {addr_q[AddrW-1:12] + 1'b1, 12'd0};
  assign addr_max      = addr_q + AddrW'(MaxBurstBeats * BeatBytes);
  assign next_row_next = next_row_q + stride_q;
  assign req_next_row  = req_addr_i + req_stride_i;

  // The flags at the next row's start; after a burst to the boundary (a fresh page follows);
  // after MaxBurstBeats short of it.
  assign next_boundary    = CmpW'(next_to4k_q) <= CmpW'(MaxBurstBeats);
  assign next_row_end     = CmpW'(row_beats_q) <= CmpW'(next_to4k_q) &&
                            CmpW'(row_beats_q) <= CmpW'(MaxBurstBeats);
  assign mid_boundary     = CmpW'(to4k_q) <= CmpW'(2 * MaxBurstBeats);
  assign mid_row_end      = CmpW'(beats_left_q) <= CmpW'(to4k_q) &&
                            CmpW'(beats_left_q) <= CmpW'(2 * MaxBurstBeats);
  assign mid_row_end_page = CmpW'(beats_left_q) <= CmpW'(to4k_q) + CmpW'(FirstCap);

  always_comb begin
    active_d     = active_q;
    narrow_d     = narrow_q;
    addr_d       = addr_q;
    row_addr_d   = row_addr_q;
    next_row_d   = next_row_q;
    stride_d     = stride_q;
    row_bytes_d  = row_bytes_q;
    row_beats_d  = row_beats_q;
    beats_left_d = beats_left_q;
    rows_left_d  = rows_left_q;
    last_row_d   = last_row_q;
    to4k_d       = to4k_q;
    next_to4k_d  = next_to4k_q;
    boundary_d   = boundary_q;
    row_end_d    = row_end_q;
    if (req_hs) begin
      active_d     = 1'b1;
      narrow_d     = req_narrow;
      addr_d       = req_addr_i & ~BeatMask;
      row_addr_d   = req_addr_i;
      next_row_d   = req_next_row;
      stride_d     = req_stride_i;
      row_bytes_d  = req_row_bytes_i;
      row_beats_d  = req_row_beats;
      beats_left_d = req_row_beats;
      rows_left_d  = req_rows_i;
      last_row_d   = req_rows_i == LenW'(1);
      to4k_d       = beats_to_4k(req_addr_i[11:0]);
      next_to4k_d  = beats_to_4k(req_next_row[11:0]);
      boundary_d   = near_4k(req_addr_i[11:0]);
      row_end_d    = fits_page(req_row_beats, req_addr_i[11:0]) &&
                     CmpW'(req_row_beats) <= CmpW'(MaxBurstBeats);
    end else if (burst_take_i) begin
      if (burst_last_o) begin
        active_d = 1'b0;
      end else if (row_end_q) begin
        addr_d       = next_row_q & ~BeatMask;
        row_addr_d   = next_row_q;
        next_row_d   = next_row_next;
        beats_left_d = row_beats_q;
        rows_left_d  = rows_left_q - LenW'(1);
        last_row_d   = rows_left_q == LenW'(2);
        to4k_d       = next_to4k_q;
        next_to4k_d  = beats_to_4k(next_row_next[11:0]);
        boundary_d   = next_boundary;
        row_end_d    = next_row_end;
      end else begin
        addr_d       = boundary_q ? addr_page : addr_max;
        beats_left_d = beats_left_q - LenW'(cap);
        to4k_d       = boundary_q ? 13'(PageBeats) : to4k_q - 13'(MaxBurstBeats);
        boundary_d   = boundary_q ? (PageBeats <= MaxBurstBeats) : mid_boundary;
        row_end_d    = boundary_q ? mid_row_end_page : mid_row_end;
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      active_q <= 1'b0;
    end else begin
      active_q <= active_d;
    end
  end

  // Request registers are qualified by active_q.
  always_ff @(posedge clk_i) begin
    narrow_q     <= narrow_d;
    addr_q       <= addr_d;
    row_addr_q   <= row_addr_d;
    next_row_q   <= next_row_d;
    stride_q     <= stride_d;
    row_bytes_q  <= row_bytes_d;
    row_beats_q  <= row_beats_d;
    beats_left_q <= beats_left_d;
    rows_left_q  <= rows_left_d;
    last_row_q   <= last_row_d;
    to4k_q       <= to4k_d;
    next_to4k_q  <= next_to4k_d;
    boundary_q   <= boundary_d;
    row_end_q    <= row_end_d;
  end

`ifndef SYNTHESIS
  // The registered flags describe the address and the row; a burst is never empty, never longer
  // than MaxBurstBeats, and never crosses a 4 KiB boundary.
  // "if (rst_ni)" alone, with the rest nested: Yosys recognizes the asynchronous reset of a
  // checking process only in that form.
  always @(posedge clk_i or negedge rst_ni) begin
    if (rst_ni) begin
      if (active_q) begin
        assert (to4k_q == beats_to_4k(addr_q[11:0]));
        assert (boundary_q == (CmpW'(to4k_q) <= CmpW'(MaxBurstBeats)));
        assert (row_end_q == (CmpW'(beats_left_q) <= cap));
        assert (last_row_q == (rows_left_q == LenW'(1)));
        assert (32'(burst_len_o) + 1 <= MaxBurstBeats);
        assert (32'(addr_q[11:0]) + (32'(burst_len_o) + 1) * BeatBytes <= 4096);
        // A narrow row fits in its beat (nmsa_dma_wr states why the first row alone is not
        // enough).
        if (narrow_q) begin
          assert (32'(row_addr_q[BeatOff-1:0]) + 32'(row_bytes_q) <= BeatBytes);
        end
      end
    end
  end
`endif

endmodule

`default_nettype wire
