// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Formal harness of nmsa_dma_rd (scripts/formal_dma.sh): the read engine's AXI4 master under
// every request sequence legal by its contract (rows and row_bytes nonzero; addr, row_bytes and
// stride multiples of the beat; held until accepted) and every AXI-legal slave (ARREADY free; R
// beats only for bursts in flight, in order, RLAST on each burst's last beat, held until
// accepted; RREADY is the consumer's, free). Checked in every cycle after reset:
//   - AR: INCR, AxSIZE the bus width, ID 0, beat-aligned, AxLEN + 1 <= MaxBurstBeats, never
//     across a 4 KiB boundary; ARVALID held until ARREADY with the whole payload stable; at most
//     MaxOutstanding bursts in flight;
//   - bytes: a reference walker of the request in this harness; every AR is the next piece of
//     the current row (address, no byte past the row's end), the bytes of a request's ARs add up
//     to rows * row_bytes, no AR without a request, and the engine takes the next request exactly
//     when the current one has no byte left to request;
//   - R: the engine counts beats itself; with RLAST where a legal slave puts it, rd_last_o marks
//     exactly the last beat of each request, and the stream is R passed through;
// together with the engine's own assertions (request rules, R only in flight with RLAST on the
// burst's last beat by the engine's count, stability) and the burst generator's.
// Mutant (default 0) corrupts the engine's outputs as the harness sees them; every mutant must
// make a property fail (scripts/formal_dma.sh --selftest).
`default_nettype none

module nmsa_dma_rd_fv #(
  parameter int unsigned AddrW          = 13,
  parameter int unsigned LenW           = 5,
  parameter int unsigned MaxBurstBeats  = 4,
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
  input logic             rd_ready_i,
  input logic             ar_ready_i,
  input logic             r_valid_i,
  input logic             r_id_i,
  input logic [31:0]      r_data_i,
  input logic [1:0]       r_resp_i,
  input logic             r_last_i
);
  localparam int unsigned AxiDataW  = 32;
  localparam int unsigned BeatBytes = AxiDataW / 8;
  localparam int unsigned BeatOff   = $clog2(BeatBytes);
  localparam int unsigned QPtrW     = MaxOutstanding > 1 ? $clog2(MaxOutstanding) : 1;
  localparam int unsigned QCntW     = $clog2(MaxOutstanding + 1);
  localparam logic [AddrW-1:0] BeatMask = AddrW'(BeatBytes - 1);

  logic             req_ready, rd_valid, rd_last, ar_valid, ar_id, r_ready, busy;
  logic [31:0]      rd_data;
  logic [1:0]       rd_resp, ar_burst;
  logic [AddrW-1:0] ar_addr;
  logic [7:0]       ar_len;
  logic [2:0]       ar_size, ar_prot;
  logic [3:0]       ar_cache;

  nmsa_dma_rd #(
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
    .rd_valid_o     (rd_valid),
    .rd_ready_i     (rd_ready_i),
    .rd_data_o      (rd_data),
    .rd_resp_o      (rd_resp),
    .rd_last_o      (rd_last),
    .ar_valid_o     (ar_valid),
    .ar_ready_i     (ar_ready_i),
    .ar_id_o        (ar_id),
    .ar_addr_o      (ar_addr),
    .ar_len_o       (ar_len),
    .ar_size_o      (ar_size),
    .ar_burst_o     (ar_burst),
    .ar_cache_o     (ar_cache),
    .ar_prot_o      (ar_prot),
    .r_valid_i      (r_valid_i),
    .r_ready_o      (r_ready),
    .r_id_i         (r_id_i),
    .r_data_i       (r_data_i),
    .r_resp_i       (r_resp_i),
    .r_last_i       (r_last_i),
    .busy_o         (busy)
  );

  // Reset in the first cycle only.
  logic init_q = 1'b1;
  always @(posedge clk_i) init_q <= 1'b0;
  always @* assume (rst_ni == !init_q);

  // A registered "stalled last cycle" flag, for the stability mutant.
  logic ar_stalled_q;
  always @(posedge clk_i) ar_stalled_q <= rst_ni && ar_valid && !ar_ready_i;

  // The outputs as the properties see them: the engine's, or a mutant's.
  logic             ar_valid_m, rd_last_m;
  logic [AddrW-1:0] ar_addr_m;
  logic [7:0]       ar_len_m;
  logic [1:0]       ar_burst_m;
  logic [2:0]       ar_prot_m;

  always_comb begin
    ar_valid_m = ar_valid;
    ar_prot_m  = ar_prot;
    ar_addr_m  = ar_addr;
    ar_len_m   = ar_len;
    ar_burst_m = ar_burst;
    rd_last_m  = rd_last;
    case (Mutant)
      // One beat more on a burst that ends a page: crosses 4 KiB.
      1: ar_len_m   = ar_addr[11:BeatOff] + 10'(ar_len) == 10'h3ff ? ar_len + 8'd1 : ar_len;
      // The address moves while ARVALID waits for ARREADY.
      2: ar_addr_m  = ar_stalled_q ? ar_addr ^ AddrW'(BeatBytes) : ar_addr;
      // ARVALID dropped after one cycle of waiting.
      3: ar_valid_m = ar_valid && !ar_stalled_q;
      // One beat too many on every burst of two beats or more: more bytes than asked.
      4: ar_len_m   = ar_len != '0 ? ar_len + 8'd1 : ar_len;
      // FIXED instead of INCR.
      5: ar_burst_m = 2'b00;
      // Trusts RLAST for the request's end: marks the end of every burst.
      6: rd_last_m  = r_last_i;
      // ARPROT moves while ARVALID waits (only the stability check sees it).
      7: ar_prot_m  = ar_stalled_q ? ~ar_prot : ar_prot;
      default: ;
    endcase
  end

  logic req_hs, ar_hs, r_hs;
  assign req_hs = req_valid_i && req_ready;
  assign ar_hs  = ar_valid_m && ar_ready_i;
  assign r_hs   = r_valid_i && r_ready;

  // ---------------------------------------------------------------------------------------------
  // The requester: legal requests, held until accepted.
  // ---------------------------------------------------------------------------------------------
  always @* begin
    if (req_valid_i) begin
      assume (req_rows_i != '0);
      assume (req_row_bytes_i != '0);
      assume ((req_addr_i & BeatMask) == '0);
      assume ((AddrW'(req_row_bytes_i) & BeatMask) == '0);
      assume ((req_stride_i & BeatMask) == '0);
    end
  end

  always @(posedge clk_i) begin
    if (!init_q && rst_ni && $past(rst_ni && req_valid_i && !req_ready)) begin
      assume (req_valid_i);
      assume ($stable(req_addr_i) && $stable(req_row_bytes_i) && $stable(req_rows_i) &&
              $stable(req_stride_i));
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Reference walker of the current request: the next row and byte the engine must request.
  // ---------------------------------------------------------------------------------------------
  logic             ref_active_q;
  logic [AddrW-1:0] ref_row_q, ref_stride_q;
  logic [LenW-1:0]  ref_row_bytes_q, ref_rows_q, ref_off_q;
  logic [15:0]      ar_bytes, ref_row_end;
  logic             ar_row_done, ar_req_done;

  assign ar_bytes    = (16'(ar_len_m) + 16'd1) * 16'(BeatBytes);
  assign ref_row_end = 16'(ref_off_q) + ar_bytes;
  assign ar_row_done = ref_row_end == 16'(ref_row_bytes_q);
  assign ar_req_done = ar_row_done && ref_rows_q == LenW'(1);

  always @(posedge clk_i) begin
    if (!rst_ni) begin
      ref_active_q <= 1'b0;
    end else if (req_hs) begin
      ref_active_q    <= 1'b1;
      ref_row_q       <= req_addr_i;
      ref_stride_q    <= req_stride_i;
      ref_row_bytes_q <= req_row_bytes_i;
      ref_rows_q      <= req_rows_i;
      ref_off_q       <= '0;
    end else if (ar_hs) begin
      if (ar_req_done) begin
        ref_active_q <= 1'b0;
      end else if (ar_row_done) begin
        ref_row_q  <= ref_row_q + ref_stride_q;
        ref_rows_q <= ref_rows_q - LenW'(1);
        ref_off_q  <= '0;
      end else begin
        ref_off_q <= LenW'(ref_row_end);
      end
    end
  end

  // ---------------------------------------------------------------------------------------------
  // The slave: bursts in flight in AR order (length and whether it ends its request), R beats
  // only for them, in order, RLAST on each burst's last beat, held until accepted, ID 0.
  // ---------------------------------------------------------------------------------------------
  logic [MaxOutstanding*8-1:0] q_len_q;
  logic [MaxOutstanding-1:0]   q_last_q;
  logic [QPtrW-1:0]            q_rd_q, q_wr_q;
  logic [QCntW-1:0]            q_cnt_q;
  logic [7:0]                  r_beat_q, head_len;
  logic                        head_last, r_pop;

  assign head_len  = q_len_q[q_rd_q*8 +: 8];
  assign head_last = q_last_q[q_rd_q];
  assign r_pop     = r_hs && q_cnt_q != '0 && r_beat_q == head_len;

  always @(posedge clk_i) begin
    if (!rst_ni) begin
      q_rd_q   <= '0;
      q_wr_q   <= '0;
      q_cnt_q  <= '0;
      r_beat_q <= '0;
    end else begin
      if (ar_hs && q_cnt_q != QCntW'(MaxOutstanding)) begin
        q_len_q[q_wr_q*8 +: 8] <= ar_len_m;
        q_last_q[q_wr_q]       <= ar_req_done;
        q_wr_q <= q_wr_q == QPtrW'(MaxOutstanding - 1) ? '0 : q_wr_q + 1'b1;
      end
      if (r_pop) begin
        q_rd_q <= q_rd_q == QPtrW'(MaxOutstanding - 1) ? '0 : q_rd_q + 1'b1;
      end
      q_cnt_q <= q_cnt_q + QCntW'(ar_hs && q_cnt_q != QCntW'(MaxOutstanding)) - QCntW'(r_pop);
      if (r_hs && q_cnt_q != '0) r_beat_q <= r_pop ? '0 : r_beat_q + 8'd1;
    end
  end

  always @* begin
    if (r_valid_i) begin
      assume (q_cnt_q != '0);
      assume (r_id_i == 1'b0);
      assume (r_last_i == (r_beat_q == head_len));
    end
  end

  always @(posedge clk_i) begin
    if (!init_q && rst_ni && $past(rst_ni && r_valid_i && !r_ready)) begin
      assume (r_valid_i);
      assume ($stable(r_data_i) && $stable(r_resp_i) && $stable(r_last_i) && $stable(r_id_i));
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Properties.
  // ---------------------------------------------------------------------------------------------
  always @* begin
    if (!init_q) begin
      if (ar_valid_m) begin
        // The burst's form.
        assert (ar_burst_m == 2'b01);
        assert (ar_size == 3'(BeatOff));
        assert (ar_id == 1'b0);
        assert ((ar_addr_m & BeatMask) == '0);
        assert (32'(ar_len_m) + 1 <= MaxBurstBeats);
        assert (32'(ar_addr_m[11:0]) + (32'(ar_len_m) + 1) * BeatBytes <= 4096);
        // At most MaxOutstanding bursts in flight.
        assert (q_cnt_q != QCntW'(MaxOutstanding));
        // The next piece of the current row, no byte past its end.
        assert (ref_active_q);
        assert (ar_addr_m == ref_row_q + AddrW'(ref_off_q));
        assert (ref_row_end <= 16'(ref_row_bytes_q));
      end
      // A request is taken exactly when the current one has no byte left to request.
      assert (req_ready == !ref_active_q);
      if (ref_active_q) begin
        assert (busy);
      end
      // R passed through; the request's end by the engine's count.
      assert (rd_valid == r_valid_i);
      assert (r_ready == rd_ready_i);
      if (r_valid_i) begin
        assert (rd_data == r_data_i && rd_resp == r_resp_i);
        assert (rd_last_m == (r_last_i && head_last));
      end
    end
  end

  // VALID held until READY, payload stable.
  always @(posedge clk_i) begin
    if (!init_q && rst_ni && $past(rst_ni && ar_valid_m && !ar_ready_i)) begin
      assert (ar_valid_m);
      assert ($stable(ar_addr_m) && $stable(ar_len_m) && $stable(ar_size) &&
              $stable(ar_burst_m) && $stable(ar_id) && $stable(ar_cache) && $stable(ar_prot_m));
    end
  end
endmodule

`default_nettype wire
