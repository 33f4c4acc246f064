// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Control and status registers behind an AXI4-Lite slave. The map is generated from
// rtl/regs/nmsa_regs.json into nmsa_reg_pkg (docs/registers.md describes every register and the
// bus rules implemented here). Run control (start, busy, done, errors) lives in the top; this block
// holds the configuration, the interrupt status and the performance counters (CounterW bits).
`default_nettype none

module nmsa_csr #(
  parameter int unsigned Rows       = 8,
  parameter int unsigned Cols       = 8,
  parameter int unsigned N          = 2,
  parameter int unsigned M          = 4,
  parameter int unsigned DataW      = 8,
  parameter int unsigned AccW       = 32,
  parameter int unsigned AxiDataW   = 64,
  parameter int unsigned ActEntries = 2048,
  parameter int unsigned WgtRecords = 256,
  parameter int unsigned EpiEntries = 64,
  parameter int unsigned AccEntries = 2048,
  parameter bit          Sparse     = 1'b1,
  // Structure reported to software (CAP_QUEUES, CAP_DMA, CAP_PIPELINE; docs/registers.md).
  parameter int unsigned EpiLanes       = 4,
  parameter int unsigned MaxBurstBeats  = 16,
  parameter int unsigned MaxOutstanding = 16,
  parameter int unsigned ArrayLatency   = 19,
  parameter int unsigned StoreRowSlots  = 8,
  parameter int unsigned QueueDepth     = nmsa_pkg::CmdQueueDepth,
  parameter int unsigned FetchChunkCmds = nmsa_pkg::FetchChunkCmds,
  parameter int unsigned FetchChunks    = nmsa_pkg::FetchChunks,
  parameter int unsigned PendingLoads   = nmsa_pkg::PendingLoads,
  parameter int unsigned ReadRequests   = nmsa_pkg::ReadRequests,
  // Bits of each performance counter, 33 to 64 (CAP_WIDTHS.COUNTER_W): a counter wraps modulo
  // 2^CounterW; its HI register holds bits [CounterW-1:32], zero-extended.
  parameter int unsigned CounterW       = 64,
  parameter int unsigned IncW       = 16     // width of one counter increment
) (
  input  logic                      clk_i,
  input  logic                      rst_ni,
  input  logic                      clear_i,       // soft reset: counters and status

  // AXI4-Lite slave.
  input  logic                      aw_valid_i,
  output logic                      aw_ready_o,
  input  logic [11:0]               aw_addr_i,
  input  logic                      w_valid_i,
  output logic                      w_ready_o,
  input  logic [31:0]               w_data_i,
  input  logic [3:0]                w_strb_i,
  output logic                      b_valid_o,
  input  logic                      b_ready_i,
  output logic [1:0]                b_resp_o,
  input  logic                      ar_valid_i,
  output logic                      ar_ready_o,
  input  logic [11:0]               ar_addr_i,
  output logic                      r_valid_o,
  input  logic                      r_ready_i,
  output logic [31:0]               r_data_o,
  output logic [1:0]                r_resp_o,

  // Run control.
  output logic                      start_o,
  output logic                      soft_reset_o,
  output logic [63:0]               cmd_base_o,
  output logic [31:0]               cmd_count_o,
  input  logic                      busy_i,
  input  logic                      done_i,
  input  logic                      error_i,
  input  logic [3:0]                err_code_i,
  input  logic [31:0]               err_index_i,
  input  logic                      irq_done_set_i,
  input  logic                      irq_error_set_i,
  output logic                      irq_o,

  // Counter increments, counter i at [i*IncW +: IncW].
  input  logic [nmsa_reg_pkg::NMSA_NUM_COUNTERS*IncW-1:0] cnt_inc_i
);

  localparam int unsigned NumCnt = nmsa_reg_pkg::NMSA_NUM_COUNTERS;

  // Capabilities must fit their fields.
  if (Rows > 255 || Cols > 255 || N > 15 || M > 15 || DataW > 255 || AccW > 255 ||
      AxiDataW > 255 || EpiLanes > 255 || MaxBurstBeats > 511 || MaxOutstanding > 255 ||
      ArrayLatency > 255 || StoreRowSlots > 255 || QueueDepth > 255 ||
      FetchChunkCmds > 255 || FetchChunks > 255 || PendingLoads > 255 || ReadRequests > 255 ||
      nmsa_pkg::EpiLatency > 255) begin : g_bad_caps
    $error("nmsa_csr: a capability does not fit its register field");
  end
  if (CounterW < 33 || CounterW > 64) begin : g_bad_counter_w
    $error("nmsa_csr: CounterW must be 33 to 64 (a HI register of at least one bit)");
  end

  // ---------------------------------------------------------------------------------------------
  // Registers
  // ---------------------------------------------------------------------------------------------
  logic        irq_en_d, irq_en_q;
  logic [31:0] base_lo_d, base_lo_q, base_hi_d, base_hi_q, count_d, count_q;
  logic        irq_done_d, irq_done_q, irq_error_d, irq_error_q;
  logic [CounterW-1:0]  cnt_d [NumCnt];
  logic [CounterW-1:0]  cnt_q [NumCnt];
  logic [CounterW-33:0] shadow_d [NumCnt];
  logic [CounterW-33:0] shadow_q [NumCnt];

  // ---------------------------------------------------------------------------------------------
  // AXI4-Lite: one write and one read at a time; a write needs address and data together.
  // ---------------------------------------------------------------------------------------------
  logic        wr_fire, rd_fire;
  logic        b_valid_d, b_valid_q, r_valid_d, r_valid_q;
  logic [1:0]  b_resp_d, b_resp_q, r_resp_d, r_resp_q;
  logic [31:0] r_data_d, r_data_q;
  logic [31:0] rd_value;
  logic        rd_hit, wr_hit;

  assign aw_ready_o = aw_valid_i && w_valid_i && !b_valid_q;
  assign w_ready_o  = aw_ready_o;
  assign wr_fire    = aw_ready_o;
  assign ar_ready_o = ar_valid_i && !r_valid_q;
  assign rd_fire    = ar_ready_o;

  assign b_valid_o = b_valid_q;
  assign b_resp_o  = b_resp_q;
  assign r_valid_o = r_valid_q;
  assign r_resp_o  = r_resp_q;
  assign r_data_o  = r_data_q;

  // Byte-lane merge of a write into a 32-bit value.
  function automatic logic [31:0] merge(logic [31:0] old, logic [31:0] data, logic [3:0] strb);
    merge = old;
    for (int unsigned b = 0; b < 4; b++) begin
      if (strb[b]) merge[b*8 +: 8] = data[b*8 +: 8];
    end
  endfunction

  logic [11:0] wr_addr;
  logic [31:0] wr_bits;   // the bits of w_data_i whose byte strobe is set
  assign wr_addr = {aw_addr_i[11:2], 2'b00};
  always_comb begin
    for (int unsigned b = 0; b < 4; b++) begin
      wr_bits[b*8 +: 8] = w_strb_i[b] ? w_data_i[b*8 +: 8] : 8'h00;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Read decode
  // ---------------------------------------------------------------------------------------------
  logic [11:0] rd_addr;
  logic [31:0] cap_array, cap_widths, cap_queues, cap_dma, cap_pipeline, status_value;
  assign rd_addr = {ar_addr_i[11:2], 2'b00};

  always_comb begin
    cap_array = '0;
    cap_array[nmsa_reg_pkg::NMSA_CAP_ARRAY_ROWS_LSB +: 8]   = 8'(Rows);
    cap_array[nmsa_reg_pkg::NMSA_CAP_ARRAY_COLS_LSB +: 8]   = 8'(Cols);
    cap_array[nmsa_reg_pkg::NMSA_CAP_ARRAY_N_LSB +: 4]      = 4'(N);
    cap_array[nmsa_reg_pkg::NMSA_CAP_ARRAY_M_LSB +: 4]      = 4'(M);
    cap_array[nmsa_reg_pkg::NMSA_CAP_ARRAY_SPARSE_LSB]      = Sparse;
    cap_widths = '0;
    cap_widths[nmsa_reg_pkg::NMSA_CAP_WIDTHS_DATA_W_LSB +: 8]     = 8'(DataW);
    cap_widths[nmsa_reg_pkg::NMSA_CAP_WIDTHS_ACC_W_LSB +: 8]      = 8'(AccW);
    cap_widths[nmsa_reg_pkg::NMSA_CAP_WIDTHS_AXI_DATA_W_LSB +: 8] = 8'(AxiDataW);
    cap_widths[nmsa_reg_pkg::NMSA_CAP_WIDTHS_COUNTER_W_LSB +: 8]  = 8'(CounterW);
    cap_queues = '0;
    cap_queues[nmsa_reg_pkg::NMSA_CAP_QUEUES_QUEUE_DEPTH_LSB +: 8]   = 8'(QueueDepth);
    cap_queues[nmsa_reg_pkg::NMSA_CAP_QUEUES_FETCH_CHUNK_LSB +: 8]   = 8'(FetchChunkCmds);
    cap_queues[nmsa_reg_pkg::NMSA_CAP_QUEUES_FETCH_CHUNKS_LSB +: 8]  = 8'(FetchChunks);
    cap_queues[nmsa_reg_pkg::NMSA_CAP_QUEUES_PENDING_LOADS_LSB +: 8] = 8'(PendingLoads);
    cap_dma = '0;
    cap_dma[nmsa_reg_pkg::NMSA_CAP_DMA_MAX_BURST_LSB +: 9]       = 9'(MaxBurstBeats);
    cap_dma[nmsa_reg_pkg::NMSA_CAP_DMA_MAX_OUTSTANDING_LSB +: 8] = 8'(MaxOutstanding);
    cap_dma[nmsa_reg_pkg::NMSA_CAP_DMA_READ_REQUESTS_LSB +: 8]   = 8'(ReadRequests);
    cap_pipeline = '0;
    cap_pipeline[nmsa_reg_pkg::NMSA_CAP_PIPELINE_ARRAY_LATENCY_LSB +: 8] = 8'(ArrayLatency);
    cap_pipeline[nmsa_reg_pkg::NMSA_CAP_PIPELINE_EPI_LANES_LSB +: 8]     = 8'(EpiLanes);
    cap_pipeline[nmsa_reg_pkg::NMSA_CAP_PIPELINE_EPI_LATENCY_LSB +: 8]   = 8'(nmsa_pkg::EpiLatency);
    cap_pipeline[nmsa_reg_pkg::NMSA_CAP_PIPELINE_STORE_ROWS_LSB +: 8]    = 8'(StoreRowSlots);
    status_value = '0;
    status_value[nmsa_reg_pkg::NMSA_STATUS_BUSY_LSB]      = busy_i;
    status_value[nmsa_reg_pkg::NMSA_STATUS_DONE_LSB]      = done_i;
    status_value[nmsa_reg_pkg::NMSA_STATUS_ERROR_LSB]     = error_i;
    status_value[nmsa_reg_pkg::NMSA_STATUS_ERR_CODE_LSB +: 4] = err_code_i;
  end

  always_comb begin
    rd_hit   = 1'b1;
    rd_value = '0;
    unique case (rd_addr)
      nmsa_reg_pkg::NMSA_ID_OFFSET:              rd_value = nmsa_reg_pkg::NMSA_ID_RESET;
      nmsa_reg_pkg::NMSA_VERSION_OFFSET:         rd_value = nmsa_reg_pkg::NMSA_VERSION_RESET;
      nmsa_reg_pkg::NMSA_CAP_ARRAY_OFFSET:       rd_value = cap_array;
      nmsa_reg_pkg::NMSA_CAP_WIDTHS_OFFSET:      rd_value = cap_widths;
      nmsa_reg_pkg::NMSA_CAP_ACT_ENTRIES_OFFSET: rd_value = 32'(ActEntries);
      nmsa_reg_pkg::NMSA_CAP_WGT_RECORDS_OFFSET: rd_value = 32'(WgtRecords);
      nmsa_reg_pkg::NMSA_CAP_EPI_ENTRIES_OFFSET: rd_value = 32'(EpiEntries);
      nmsa_reg_pkg::NMSA_CAP_ACC_ENTRIES_OFFSET: rd_value = 32'(AccEntries);
      nmsa_reg_pkg::NMSA_CTRL_OFFSET:
        rd_value = 32'(irq_en_q) << nmsa_reg_pkg::NMSA_CTRL_IRQ_EN_LSB;
      nmsa_reg_pkg::NMSA_STATUS_OFFSET:          rd_value = status_value;
      nmsa_reg_pkg::NMSA_ERR_INFO_OFFSET:        rd_value = err_index_i;
      nmsa_reg_pkg::NMSA_IRQ_STATUS_OFFSET:
        rd_value = (32'(irq_done_q) << nmsa_reg_pkg::NMSA_IRQ_STATUS_DONE_LSB) |
                   (32'(irq_error_q) << nmsa_reg_pkg::NMSA_IRQ_STATUS_ERROR_LSB);
      nmsa_reg_pkg::NMSA_CMD_BASE_LO_OFFSET:     rd_value = base_lo_q;
      nmsa_reg_pkg::NMSA_CMD_BASE_HI_OFFSET:     rd_value = base_hi_q;
      nmsa_reg_pkg::NMSA_CMD_COUNT_OFFSET:       rd_value = count_q;
      nmsa_reg_pkg::NMSA_CAP_QUEUES_OFFSET:      rd_value = cap_queues;
      nmsa_reg_pkg::NMSA_CAP_DMA_OFFSET:         rd_value = cap_dma;
      nmsa_reg_pkg::NMSA_CAP_PIPELINE_OFFSET:    rd_value = cap_pipeline;
      default: begin
        rd_hit = 1'b0;
        for (int unsigned i = 0; i < NumCnt; i++) begin
          if (rd_addr == nmsa_reg_pkg::NMSA_COUNTERS_BASE + 12'(8 * i)) begin
            rd_hit   = 1'b1;
            rd_value = cnt_q[i][31:0];
          end
          if (rd_addr == nmsa_reg_pkg::NMSA_COUNTERS_BASE + 12'(8 * i + 4)) begin
            rd_hit   = 1'b1;
            rd_value = 32'(shadow_q[i]);
          end
        end
      end
    endcase
  end

  always_comb begin
    unique case (wr_addr)
      nmsa_reg_pkg::NMSA_ID_OFFSET, nmsa_reg_pkg::NMSA_VERSION_OFFSET,
      nmsa_reg_pkg::NMSA_CAP_ARRAY_OFFSET, nmsa_reg_pkg::NMSA_CAP_WIDTHS_OFFSET,
      nmsa_reg_pkg::NMSA_CAP_ACT_ENTRIES_OFFSET, nmsa_reg_pkg::NMSA_CAP_WGT_RECORDS_OFFSET,
      nmsa_reg_pkg::NMSA_CAP_EPI_ENTRIES_OFFSET, nmsa_reg_pkg::NMSA_CAP_ACC_ENTRIES_OFFSET,
      nmsa_reg_pkg::NMSA_CTRL_OFFSET, nmsa_reg_pkg::NMSA_STATUS_OFFSET,
      nmsa_reg_pkg::NMSA_ERR_INFO_OFFSET, nmsa_reg_pkg::NMSA_IRQ_STATUS_OFFSET,
      nmsa_reg_pkg::NMSA_CMD_BASE_LO_OFFSET, nmsa_reg_pkg::NMSA_CMD_BASE_HI_OFFSET,
      nmsa_reg_pkg::NMSA_CMD_COUNT_OFFSET, nmsa_reg_pkg::NMSA_CAP_QUEUES_OFFSET,
      nmsa_reg_pkg::NMSA_CAP_DMA_OFFSET, nmsa_reg_pkg::NMSA_CAP_PIPELINE_OFFSET: wr_hit = 1'b1;
      default: wr_hit = wr_addr >= nmsa_reg_pkg::NMSA_COUNTERS_BASE &&
                        wr_addr < nmsa_reg_pkg::NMSA_COUNTERS_BASE + 12'(8 * NumCnt);
    endcase
  end

  // ---------------------------------------------------------------------------------------------
  // Next state
  // ---------------------------------------------------------------------------------------------
  logic wr_ctrl, wr_irq_status;
  assign wr_ctrl       = wr_fire && wr_addr == nmsa_reg_pkg::NMSA_CTRL_OFFSET;
  assign wr_irq_status = wr_fire && wr_addr == nmsa_reg_pkg::NMSA_IRQ_STATUS_OFFSET;

  assign start_o      = wr_ctrl && wr_bits[nmsa_reg_pkg::NMSA_CTRL_START_LSB] &&
                        !wr_bits[nmsa_reg_pkg::NMSA_CTRL_SOFT_RESET_LSB];
  assign soft_reset_o = wr_ctrl && wr_bits[nmsa_reg_pkg::NMSA_CTRL_SOFT_RESET_LSB];

  always_comb begin
    irq_en_d  = irq_en_q;
    base_lo_d = base_lo_q;
    base_hi_d = base_hi_q;
    count_d   = count_q;
    if (wr_ctrl && w_strb_i[nmsa_reg_pkg::NMSA_CTRL_IRQ_EN_LSB / 8]) begin
      irq_en_d = w_data_i[nmsa_reg_pkg::NMSA_CTRL_IRQ_EN_LSB];
    end
    if (wr_fire && wr_addr == nmsa_reg_pkg::NMSA_CMD_BASE_LO_OFFSET) begin
      base_lo_d = merge(base_lo_q, w_data_i, w_strb_i);
    end
    if (wr_fire && wr_addr == nmsa_reg_pkg::NMSA_CMD_BASE_HI_OFFSET) begin
      base_hi_d = merge(base_hi_q, w_data_i, w_strb_i);
    end
    if (wr_fire && wr_addr == nmsa_reg_pkg::NMSA_CMD_COUNT_OFFSET) begin
      count_d = merge(count_q, w_data_i, w_strb_i);
    end

    // w1c; a hardware set in the same cycle wins.
    irq_done_d  = irq_done_q;
    irq_error_d = irq_error_q;
    if (wr_irq_status && wr_bits[nmsa_reg_pkg::NMSA_IRQ_STATUS_DONE_LSB])  irq_done_d  = 1'b0;
    if (wr_irq_status && wr_bits[nmsa_reg_pkg::NMSA_IRQ_STATUS_ERROR_LSB]) irq_error_d = 1'b0;
    if (irq_done_set_i)  irq_done_d  = 1'b1;
    if (irq_error_set_i) irq_error_d = 1'b1;

    for (int unsigned i = 0; i < NumCnt; i++) begin
      cnt_d[i]    = cnt_q[i] + CounterW'(cnt_inc_i[i*IncW +: IncW]);
      shadow_d[i] = shadow_q[i];
      if (rd_fire && rd_addr == nmsa_reg_pkg::NMSA_COUNTERS_BASE + 12'(8 * i)) begin
        shadow_d[i] = cnt_q[i][CounterW-1:32];
      end
    end

    b_valid_d = b_valid_q;
    b_resp_d  = b_resp_q;
    if (b_valid_q && b_ready_i) b_valid_d = 1'b0;
    if (wr_fire) begin
      b_valid_d = 1'b1;
      b_resp_d  = wr_hit ? 2'b00 : 2'b10;
    end
    r_valid_d = r_valid_q;
    r_resp_d  = r_resp_q;
    r_data_d  = r_data_q;
    if (r_valid_q && r_ready_i) r_valid_d = 1'b0;
    if (rd_fire) begin
      r_valid_d = 1'b1;
      r_resp_d  = rd_hit ? 2'b00 : 2'b10;
      r_data_d  = rd_value;
    end
  end

  // Registers are word-aligned: the byte offset within a word is ignored (docs/registers.md).
  logic unused;
  assign unused = ^{aw_addr_i[1:0], ar_addr_i[1:0]};

  assign cmd_base_o  = {base_hi_q, base_lo_q};
  assign cmd_count_o = count_q;
  assign irq_o       = irq_en_q && (irq_done_q || irq_error_q);

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      irq_en_q    <= 1'b0;
      base_lo_q   <= '0;
      base_hi_q   <= '0;
      count_q     <= '0;
      irq_done_q  <= 1'b0;
      irq_error_q <= 1'b0;
      b_valid_q   <= 1'b0;
      b_resp_q    <= '0;
      r_valid_q   <= 1'b0;
      r_resp_q    <= '0;
      r_data_q    <= '0;
      for (int unsigned i = 0; i < NumCnt; i++) begin
        cnt_q[i]    <= '0;
        shadow_q[i] <= '0;
      end
    end else begin
      irq_en_q  <= irq_en_d;
      base_lo_q <= base_lo_d;
      base_hi_q <= base_hi_d;
      count_q   <= count_d;
      b_valid_q <= b_valid_d;
      b_resp_q  <= b_resp_d;
      r_valid_q <= r_valid_d;
      r_resp_q  <= r_resp_d;
      r_data_q  <= r_data_d;
      if (clear_i) begin
        irq_done_q  <= 1'b0;
        irq_error_q <= 1'b0;
        for (int unsigned i = 0; i < NumCnt; i++) begin
          cnt_q[i]    <= '0;
          shadow_q[i] <= '0;
        end
      end else begin
        irq_done_q  <= irq_done_d;
        irq_error_q <= irq_error_d;
        for (int unsigned i = 0; i < NumCnt; i++) begin
          cnt_q[i]    <= cnt_d[i];
          shadow_q[i] <= shadow_d[i];
        end
      end
    end
  end

endmodule

`default_nettype wire
