// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Formal harness of nmsa_dma_wr (scripts/formal_dma.sh): the write engine's AXI4 master under
// every request sequence legal by its contract (rows and row_bytes nonzero; full rows with addr,
// row_bytes and stride multiples of the beat; narrow rows that each fit in their beat, stride a
// multiple of row_bytes; held until accepted), every data stream held until accepted, and every
// AXI-legal slave (AWREADY and WREADY free; B only for bursts whose W beats are all out, ID 0).
// Checked in every cycle after reset:
//   - AW: INCR, AxSIZE the bus width, ID 0, beat-aligned, AxLEN + 1 <= MaxBurstBeats, never
//     across a 4 KiB boundary; AWVALID held until AWREADY with the whole payload stable; at most
//     MaxOutstanding bursts awaiting B;
//   - bytes: a reference walker of the request in this harness; every AW is the next piece of
//     the current row (a narrow row: one beat at its beat-aligned address), the bytes of a
//     request's AWs add up to rows * row_bytes, no AW without a request, and the engine takes the
//     next request exactly when the current one has no byte left to request;
//   - W: beats only for bursts whose AW was issued, in AW order, exactly AWLEN + 1 per burst,
//     WLAST on exactly the last; WSTRB all ones on full rows and exactly the row's bytes on a
//     narrow one, the data shifted to that lane; WVALID held until WREADY with data, strobes and
//     WLAST stable; wr_ready_o is WREADY while a burst has W beats pending;
// together with the engine's own assertions and the burst generator's.
// Mutant (default 0) corrupts the engine's outputs as the harness sees them; every mutant must
// make a property fail (scripts/formal_dma.sh --selftest).
`default_nettype none

module nmsa_dma_wr_fv #(
  parameter int unsigned AddrW          = 13,
  parameter int unsigned LenW           = 4,
  parameter int unsigned MaxBurstBeats  = 2,
  parameter int unsigned MaxOutstanding = 2,
  parameter int unsigned Mutant         = 0
) (
  input logic             clk_i,
  input logic             rst_ni,
  input logic             req_valid_i,
  input logic [AddrW-1:0] req_addr_i,
  input logic [LenW-1:0]  req_row_bytes_i,
  input logic [LenW-1:0]  req_rows_i,
  input logic [AddrW-1:0] req_stride_i,
  input logic             wr_valid_i,
  input logic [31:0]      wr_data_i,
  input logic             aw_ready_i,
  input logic             w_ready_i,
  input logic             b_valid_i,
  input logic             b_id_i,
  input logic [1:0]       b_resp_i
);
  localparam int unsigned AxiDataW  = 32;
  localparam int unsigned BeatBytes = AxiDataW / 8;
  localparam int unsigned BeatOff   = $clog2(BeatBytes);
  localparam int unsigned QPtrW     = MaxOutstanding > 1 ? $clog2(MaxOutstanding) : 1;
  localparam int unsigned QCntW     = $clog2(MaxOutstanding + 1);
  localparam int unsigned EntryW    = 8 + BeatBytes + BeatOff;   // length, strobes, lane
  localparam logic [AddrW-1:0] BeatMask = AddrW'(BeatBytes - 1);

  logic                 req_ready, wr_ready, cpl_valid, aw_valid, aw_id, w_valid, w_last;
  logic                 b_ready, busy;
  logic [1:0]           cpl_resp, aw_burst;
  logic [AddrW-1:0]     aw_addr;
  logic [7:0]           aw_len;
  logic [2:0]           aw_size, aw_prot;
  logic [3:0]           aw_cache;
  logic [31:0]          w_data;
  logic [BeatBytes-1:0] w_strb;

  nmsa_dma_wr #(
    .AddrW         (AddrW),
    .AxiDataW      (AxiDataW),
    .LenW          (LenW),
    .MaxBurstBeats (MaxBurstBeats),
    .MaxOutstanding(MaxOutstanding)
  ) dut (
    .clk_i          (clk_i),
    .rst_ni         (rst_ni),
    .req_valid_i    (req_valid_i),
    .req_ready_o    (req_ready),
    .req_addr_i     (req_addr_i),
    .req_row_bytes_i(req_row_bytes_i),
    .req_rows_i     (req_rows_i),
    .req_stride_i   (req_stride_i),
    .req_cancel_i   (1'b0),
    .wr_valid_i     (wr_valid_i),
    .wr_ready_o     (wr_ready),
    .wr_data_i      (wr_data_i),
    .cpl_valid_o    (cpl_valid),
    .cpl_resp_o     (cpl_resp),
    .aw_valid_o     (aw_valid),
    .aw_ready_i     (aw_ready_i),
    .aw_id_o        (aw_id),
    .aw_addr_o      (aw_addr),
    .aw_len_o       (aw_len),
    .aw_size_o      (aw_size),
    .aw_burst_o     (aw_burst),
    .aw_cache_o     (aw_cache),
    .aw_prot_o      (aw_prot),
    .w_valid_o      (w_valid),
    .w_ready_i      (w_ready_i),
    .w_data_o       (w_data),
    .w_strb_o       (w_strb),
    .w_last_o       (w_last),
    .b_valid_i      (b_valid_i),
    .b_ready_o      (b_ready),
    .b_id_i         (b_id_i),
    .b_resp_i       (b_resp_i),
    .busy_o         (busy)
  );

  // Completions are outside the AXI master rules checked here.
  logic unused;
  assign unused = ^{cpl_valid, cpl_resp};

  // Reset in the first cycle only.
  logic init_q = 1'b1;
  always @(posedge clk_i) init_q <= 1'b0;
  always @* assume (rst_ni == !init_q);

  // Registered "stalled last cycle" flags, for the stability mutants.
  logic aw_stalled_q, w_stalled_q;
  always @(posedge clk_i) begin
    aw_stalled_q <= rst_ni && aw_valid && !aw_ready_i;
    w_stalled_q  <= rst_ni && w_valid && !w_ready_i;
  end

  // The W queue's head, as the slave sees it (below), for the WLAST mutant.
  logic [7:0] head_len;

  // The outputs as the properties see them: the engine's, or a mutant's.
  logic                 aw_valid_m, w_valid_m, w_last_m;
  logic [7:0]           aw_len_m;
  logic [31:0]          w_data_m;
  logic [BeatBytes-1:0] w_strb_m;
  logic [3:0]           aw_cache_m;

  always_comb begin
    aw_valid_m = aw_valid;
    aw_cache_m = aw_cache;
    aw_len_m   = aw_len;
    w_valid_m  = w_valid;
    w_last_m   = w_last;
    w_data_m   = w_data;
    w_strb_m   = w_strb;
    case (Mutant)
      // One beat more on a burst that ends a page: crosses 4 KiB.
      1: aw_len_m   = aw_addr[11:BeatOff] + 10'(aw_len) == 10'h3ff ? aw_len + 8'd1 : aw_len;
      // WLAST dropped on bursts of two beats or more.
      2: w_last_m   = w_last && head_len == '0;
      // The data moves while WVALID waits for WREADY.
      3: w_data_m   = w_stalled_q ? w_data ^ 32'd1 : w_data;
      // AWLEN one short: the burst's W carries one beat too many.
      4: aw_len_m   = aw_len != '0 ? aw_len - 8'd1 : aw_len;
      // W not gated by its AW.
      5: w_valid_m  = wr_valid_i;
      // Full strobes on a narrow row.
      6: w_strb_m   = '1;
      // AWVALID dropped after one cycle of waiting.
      7: aw_valid_m = aw_valid && !aw_stalled_q;
      // AWCACHE moves while AWVALID waits (only the stability check sees it).
      8: aw_cache_m = aw_stalled_q ? ~aw_cache : aw_cache;
      default: ;
    endcase
  end

  logic req_hs, aw_hs, w_hs, b_hs;
  assign req_hs = req_valid_i && req_ready;
  assign aw_hs  = aw_valid_m && aw_ready_i;
  assign w_hs   = w_valid_m && w_ready_i;
  assign b_hs   = b_valid_i && b_ready;

  // ---------------------------------------------------------------------------------------------
  // The requester and the data producer: legal requests, both held until accepted.
  // ---------------------------------------------------------------------------------------------
  logic req_narrow;
  assign req_narrow = req_row_bytes_i < LenW'(BeatBytes);

  always @* begin
    if (req_valid_i) begin
      assume (req_rows_i != '0);
      assume (req_row_bytes_i != '0);
      if (req_narrow) begin
        assume (32'(req_addr_i[BeatOff-1:0]) + 32'(req_row_bytes_i) <= BeatBytes);
        assume ((req_stride_i % AddrW'(req_row_bytes_i)) == '0);
      end else begin
        assume ((req_addr_i & BeatMask) == '0);
        assume ((AddrW'(req_row_bytes_i) & BeatMask) == '0);
        assume ((req_stride_i & BeatMask) == '0);
      end
    end
  end

  always @(posedge clk_i) begin
    if (!init_q && rst_ni && $past(rst_ni && req_valid_i && !req_ready)) begin
      assume (req_valid_i);
      assume ($stable(req_addr_i) && $stable(req_row_bytes_i) && $stable(req_rows_i) &&
              $stable(req_stride_i));
    end
    if (!init_q && rst_ni && $past(rst_ni && wr_valid_i && !wr_ready)) begin
      assume (wr_valid_i);
      assume ($stable(wr_data_i));
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Reference walker of the current request: the next row and byte the engine must request.
  // ---------------------------------------------------------------------------------------------
  logic             ref_active_q, ref_narrow_q;
  logic [AddrW-1:0] ref_row_q, ref_stride_q;
  logic [LenW-1:0]  ref_row_bytes_q, ref_rows_q, ref_off_q;
  logic [15:0]      aw_bytes, ref_row_end;
  logic [AddrW-1:0] ref_addr;
  logic [BeatOff-1:0]   ref_lane;
  logic [BeatBytes-1:0] ref_strb;
  logic             aw_row_done, aw_req_done;

  assign ref_lane    = ref_narrow_q ? ref_row_q[BeatOff-1:0] : '0;
  assign ref_strb    = ref_narrow_q ? BeatBytes'(((1 << ref_row_bytes_q) - 1) << ref_lane) : '1;
  assign ref_addr    = ref_narrow_q ? ref_row_q & ~BeatMask : ref_row_q + AddrW'(ref_off_q);
  assign aw_bytes    = ref_narrow_q ? 16'(ref_row_bytes_q)
                                    : (16'(aw_len_m) + 16'd1) * 16'(BeatBytes);
  assign ref_row_end = 16'(ref_off_q) + aw_bytes;
  assign aw_row_done = ref_row_end == 16'(ref_row_bytes_q);
  assign aw_req_done = aw_row_done && ref_rows_q == LenW'(1);

  always @(posedge clk_i) begin
    if (!rst_ni) begin
      ref_active_q <= 1'b0;
    end else if (req_hs) begin
      ref_active_q    <= 1'b1;
      ref_narrow_q    <= req_narrow;
      ref_row_q       <= req_addr_i;
      ref_stride_q    <= req_stride_i;
      ref_row_bytes_q <= req_row_bytes_i;
      ref_rows_q      <= req_rows_i;
      ref_off_q       <= '0;
    end else if (aw_hs) begin
      if (aw_req_done) begin
        ref_active_q <= 1'b0;
      end else if (aw_row_done) begin
        ref_row_q  <= ref_row_q + ref_stride_q;
        ref_rows_q <= ref_rows_q - LenW'(1);
        ref_off_q  <= '0;
      end else begin
        ref_off_q <= LenW'(ref_row_end);
      end
    end
  end

  // Every narrow row of a request fits in its beat (the contract; the first row is assumed with
  // the request above).
  always @* begin
    if (ref_active_q && ref_narrow_q) begin
      assume (32'(ref_row_q[BeatOff-1:0]) + 32'(ref_row_bytes_q) <= BeatBytes);
    end
  end

  // ---------------------------------------------------------------------------------------------
  // The slave: bursts whose AW was issued in order (length, strobes, lane), W beats counted
  // against the head; B only for bursts whose W beats are all out, ID 0.
  // ---------------------------------------------------------------------------------------------
  logic [MaxOutstanding*EntryW-1:0] q_q;
  logic [QPtrW-1:0]                 q_rd_q, q_wr_q;
  logic [QCntW-1:0]                 q_cnt_q, b_pend_q;
  logic [7:0]                       w_beat_q;
  logic [EntryW-1:0]                head;
  logic [BeatBytes-1:0]             head_strb;
  logic [BeatOff-1:0]               head_lane;
  logic                             w_pop, q_push;

  assign head      = q_q[q_rd_q*EntryW +: EntryW];
  assign head_len  = head[7:0];
  assign head_strb = head[8 +: BeatBytes];
  assign head_lane = head[8 + BeatBytes +: BeatOff];
  assign q_push    = aw_hs && q_cnt_q + b_pend_q != QCntW'(MaxOutstanding);
  assign w_pop     = w_hs && q_cnt_q != '0 && w_last_m;

  always @(posedge clk_i) begin
    if (!rst_ni) begin
      q_rd_q   <= '0;
      q_wr_q   <= '0;
      q_cnt_q  <= '0;
      b_pend_q <= '0;
      w_beat_q <= '0;
    end else begin
      if (q_push) begin
        q_q[q_wr_q*EntryW +: EntryW] <= {ref_lane, ref_strb, aw_len_m};
        q_wr_q <= q_wr_q == QPtrW'(MaxOutstanding - 1) ? '0 : q_wr_q + 1'b1;
      end
      if (w_pop) begin
        q_rd_q <= q_rd_q == QPtrW'(MaxOutstanding - 1) ? '0 : q_rd_q + 1'b1;
      end
      q_cnt_q  <= q_cnt_q + QCntW'(q_push) - QCntW'(w_pop);
      b_pend_q <= b_pend_q + QCntW'(w_pop) - QCntW'(b_hs && b_pend_q != '0);
      if (w_hs && q_cnt_q != '0) w_beat_q <= w_last_m ? '0 : w_beat_q + 8'd1;
    end
  end

  always @* begin
    if (b_valid_i) begin
      assume (b_pend_q != '0);
      assume (b_id_i == 1'b0);
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Properties.
  // ---------------------------------------------------------------------------------------------
  always @* begin
    if (!init_q) begin
      if (aw_valid_m) begin
        // The burst's form.
        assert (aw_burst == 2'b01);
        assert (aw_size == 3'(BeatOff));
        assert (aw_id == 1'b0);
        assert ((aw_addr & BeatMask) == '0);
        assert (32'(aw_len_m) + 1 <= MaxBurstBeats);
        assert (32'(aw_addr[11:0]) + (32'(aw_len_m) + 1) * BeatBytes <= 4096);
        // At most MaxOutstanding bursts awaiting B.
        assert (q_cnt_q + b_pend_q != QCntW'(MaxOutstanding));
        // The next piece of the current row, no byte past its end.
        assert (ref_active_q);
        assert (aw_addr == ref_addr);
        if (ref_narrow_q) begin
          assert (aw_len_m == '0);
        end
        assert (ref_row_end <= 16'(ref_row_bytes_q));
      end
      // A request is taken exactly when the current one has no byte left to request.
      assert (req_ready == !ref_active_q);
      if (ref_active_q) begin
        assert (busy);
      end
      // W: only for issued AWs, in order, AWLEN + 1 beats, WLAST on the last, the row's bytes.
      assert (w_valid_m == (wr_valid_i && q_cnt_q != '0));
      assert (wr_ready == (w_ready_i && q_cnt_q != '0));
      if (w_valid_m) begin
        assert (q_cnt_q != '0);
        assert (w_last_m == (w_beat_q == head_len));
        assert (w_strb_m == head_strb);
        assert (w_data_m == wr_data_i << {head_lane, 3'b000});
      end
      assert (b_ready);
    end
  end

  // VALID held until READY, payload stable.
  always @(posedge clk_i) begin
    if (!init_q && rst_ni && $past(rst_ni && aw_valid_m && !aw_ready_i)) begin
      assert (aw_valid_m);
      assert ($stable(aw_addr) && $stable(aw_len_m) && $stable(aw_size) && $stable(aw_burst) &&
              $stable(aw_id) && $stable(aw_cache_m) && $stable(aw_prot));
    end
    if (!init_q && rst_ni && $past(rst_ni && w_valid_m && !w_ready_i)) begin
      assert (w_valid_m);
      assert ($stable(w_data_m) && $stable(w_strb_m) && $stable(w_last_m));
    end
  end
endmodule

`default_nettype wire
