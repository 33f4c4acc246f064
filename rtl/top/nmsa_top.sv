// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The nmsa accelerator: CSRs behind an AXI4-Lite slave, a command processor that fetches the
// command stream from host memory, load / compute / store engines synchronized by dependency
// tokens, scratchpads, the accumulator SRAM, and two DMA engines on one AXI4 master, with a
// register slice on each of its five channels.
// docs/isa.md is the command format, docs/registers.md the register map, docs/errors.md what
// happens on each error.
`default_nettype none

module nmsa_top #(
  parameter int unsigned Rows           = 8,
  parameter int unsigned Cols           = 8,
  parameter int unsigned N              = nmsa_pkg::DefaultN,
  parameter int unsigned M              = nmsa_pkg::DefaultM,
  parameter int unsigned DataW          = nmsa_pkg::DefaultDataW,
  parameter int unsigned AccW           = nmsa_pkg::DefaultAccW,
  parameter int unsigned AxiDataW       = 64,
  parameter int unsigned ActEntries     = 2048,
  parameter int unsigned WgtRecords     = 256,
  parameter int unsigned EpiEntries     = 64,
  parameter int unsigned AccEntries     = 2048,
  parameter bit          Sparse         = 1'b1,
  parameter int unsigned EpiLanes       = 4,
  // Queue and FIFO depths (docs/architecture.md; software reads them from CAP_QUEUES, CAP_DMA).
  parameter int unsigned QueueDepth     = nmsa_pkg::CmdQueueDepth,
  parameter int unsigned FetchChunkCmds = nmsa_pkg::FetchChunkCmds,
  parameter int unsigned FetchChunks    = nmsa_pkg::FetchChunks,
  parameter int unsigned PendingLoads   = nmsa_pkg::PendingLoads,
  parameter int unsigned ReadRequests   = nmsa_pkg::ReadRequests,
  // 1: the FIFOs sized by pipeline depth (command fetch, accumulate, store rows) read their
  // memory synchronously, so that it maps to block RAM (nmsa_fifo's BlockRam).
  parameter bit          BlockRamFifos  = 1'b0,
  // Bits of each performance counter, 33 to 64 (nmsa_csr; CAP_WIDTHS.COUNTER_W).
  parameter int unsigned CounterW       = 64,
  parameter int unsigned MaxBurstBeats  = 16,
  parameter int unsigned MaxOutstanding = 16
) (
  input  logic                  clk_i,
  input  logic                  rst_ni,
  output logic                  irq_o,

  // AXI4-Lite slave: control and status registers.
  input  logic                  csr_aw_valid_i,
  output logic                  csr_aw_ready_o,
  input  logic [11:0]           csr_aw_addr_i,
  input  logic                  csr_w_valid_i,
  output logic                  csr_w_ready_o,
  input  logic [31:0]           csr_w_data_i,
  input  logic [3:0]            csr_w_strb_i,
  output logic                  csr_b_valid_o,
  input  logic                  csr_b_ready_i,
  output logic [1:0]            csr_b_resp_o,
  input  logic                  csr_ar_valid_i,
  output logic                  csr_ar_ready_o,
  input  logic [11:0]           csr_ar_addr_i,
  output logic                  csr_r_valid_o,
  input  logic                  csr_r_ready_i,
  output logic [31:0]           csr_r_data_o,
  output logic [1:0]            csr_r_resp_o,

  // AXI4 master: host memory.
  output logic                  ar_valid_o,
  input  logic                  ar_ready_i,
  output logic                  ar_id_o,
  output logic [63:0]           ar_addr_o,
  output logic [7:0]            ar_len_o,
  output logic [2:0]            ar_size_o,
  output logic [1:0]            ar_burst_o,
  output logic [3:0]            ar_cache_o,
  output logic [2:0]            ar_prot_o,
  input  logic                  r_valid_i,
  output logic                  r_ready_o,
  input  logic                  r_id_i,
  input  logic [AxiDataW-1:0]   r_data_i,
  input  logic [1:0]            r_resp_i,
  input  logic                  r_last_i,
  output logic                  aw_valid_o,
  input  logic                  aw_ready_i,
  output logic                  aw_id_o,
  output logic [63:0]           aw_addr_o,
  output logic [7:0]            aw_len_o,
  output logic [2:0]            aw_size_o,
  output logic [1:0]            aw_burst_o,
  output logic [3:0]            aw_cache_o,
  output logic [2:0]            aw_prot_o,
  output logic                  w_valid_o,
  input  logic                  w_ready_i,
  output logic [AxiDataW-1:0]   w_data_o,
  output logic [AxiDataW/8-1:0] w_strb_o,
  output logic                  w_last_o,
  input  logic                  b_valid_i,
  output logic                  b_ready_o,
  input  logic                  b_id_i,
  input  logic [1:0]            b_resp_i
);

  // ---------------------------------------------------------------------------------------------
  // Geometry of the buffers (docs/isa.md, LOAD)
  // ---------------------------------------------------------------------------------------------
  localparam int unsigned IdxW          = $clog2(M);
  localparam int unsigned Lanes         = Sparse ? M : N;   // activations per PE row
  localparam int unsigned ActEntryBits  = Rows * Lanes * DataW;
  localparam int unsigned ActBeats      = ActEntryBits / AxiDataW;
  localparam int unsigned RecordPayload = Cols * N * (DataW + (Sparse ? IdxW : 0));
  localparam int unsigned WgtBeats      = (RecordPayload + AxiDataW - 1) / AxiDataW;
  localparam int unsigned RecordW       = WgtBeats * AxiDataW;
  localparam int unsigned ParamW        = nmsa_pkg::EpiParamBits;
  // The epilogue scratchpad holds each entry as EpiGroups sub-entries of EpiLanes channels.
  localparam int unsigned EpiGroups     = Cols / EpiLanes;
  localparam int unsigned EpiSubBits    = EpiLanes * ParamW;
  localparam int unsigned EpiSubBeats   = EpiSubBits / AxiDataW;
  localparam int unsigned AccRowW       = Cols * AccW;
  localparam int unsigned ArrayLatency  = Rows + Cols + nmsa_pkg::PeLatency - 2;
  // Finished rows the store engine buffers: a credit for every row in flight between its read
  // and its last beat when a row leaves every EpiGroups cycles (nmsa_store).
  localparam int unsigned StoreRowSlots =
      1 << $clog2((nmsa_pkg::EpiLatency + EpiGroups + 4) / EpiGroups + 2);
  localparam int unsigned IncW          = 16;
  localparam int unsigned NumCnt        = nmsa_reg_pkg::NMSA_NUM_COUNTERS;
  localparam int unsigned TokW          = nmsa_pkg::TokenW;

  if (ActEntryBits % AxiDataW != 0 || EpiSubBits % AxiDataW != 0) begin : g_bad_geometry
    $error("nmsa_top: activation entries and epilogue sub-entries must be whole AXI beats");
  end
  if (EpiGroups * EpiLanes != Cols) begin : g_bad_epi_lanes
    $error("nmsa_top: EpiLanes must divide Cols");
  end
`ifndef SYNTHESIS
  if ($bits(nmsa_pkg::cmd_t) != nmsa_pkg::CmdTW) begin : g_bad_cmd_width
    $error("nmsa_top: nmsa_pkg::CmdTW does not match cmd_t");
  end
`endif
  if (DataW != 8) begin : g_bad_dataw
    $error("nmsa_top: the DMA layout of docs/isa.md is defined for 8-bit operands");
  end

  // ---------------------------------------------------------------------------------------------
  // CSRs and run control
  // ---------------------------------------------------------------------------------------------
  logic        start, soft_reset, clear;
  logic [63:0] cmd_base;
  logic [31:0] cmd_count;
  logic        done, err;
  logic [3:0]  err_code;
  logic [31:0] err_index;
  logic        irq_done_set, irq_error_set;
  logic [NumCnt*IncW-1:0] cnt_inc, cnt_inc_q;
  logic        busy;

  nmsa_csr #(
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
    .EpiLanes       (EpiLanes),
    .MaxBurstBeats  (MaxBurstBeats),
    .MaxOutstanding (MaxOutstanding),
    .ArrayLatency   (ArrayLatency),
    .StoreRowSlots  (StoreRowSlots),
    .QueueDepth     (QueueDepth),
    .FetchChunkCmds (FetchChunkCmds),
    .FetchChunks    (FetchChunks),
    .PendingLoads   (PendingLoads),
    .ReadRequests   (ReadRequests),
    .CounterW       (CounterW),
    .IncW       (IncW)
  ) u_csr (
    .clk_i           (clk_i),
    .rst_ni          (rst_ni),
    .clear_i         (clear),
    .aw_valid_i      (csr_aw_valid_i),
    .aw_ready_o      (csr_aw_ready_o),
    .aw_addr_i       (csr_aw_addr_i),
    .w_valid_i       (csr_w_valid_i),
    .w_ready_o       (csr_w_ready_o),
    .w_data_i        (csr_w_data_i),
    .w_strb_i        (csr_w_strb_i),
    .b_valid_o       (csr_b_valid_o),
    .b_ready_i       (csr_b_ready_i),
    .b_resp_o        (csr_b_resp_o),
    .ar_valid_i      (csr_ar_valid_i),
    .ar_ready_o      (csr_ar_ready_o),
    .ar_addr_i       (csr_ar_addr_i),
    .r_valid_o       (csr_r_valid_o),
    .r_ready_i       (csr_r_ready_i),
    .r_data_o        (csr_r_data_o),
    .r_resp_o        (csr_r_resp_o),
    .start_o         (start),
    .soft_reset_o    (soft_reset),
    .cmd_base_o      (cmd_base),
    .cmd_count_o     (cmd_count),
    .busy_i          (busy),
    .done_i          (done),
    .error_i         (err),
    .err_code_i      (err_code),
    .err_index_i     (err_index),
    .irq_done_set_i  (irq_done_set),
    .irq_error_set_i (irq_error_set),
    .irq_o           (irq_o),
    .cnt_inc_i       (cnt_inc_q)
  );

  // ---------------------------------------------------------------------------------------------
  // Command processor, queues and tokens
  // ---------------------------------------------------------------------------------------------
  logic           abort, run_start;
  nmsa_pkg::cmd_t dispatch_cmd, load_cmd, compute_cmd, store_cmd;
  logic           disp_load_valid, disp_load_ready, disp_compute_valid, disp_compute_ready;
  logic           disp_store_valid, disp_store_ready;
  logic           load_q_valid, load_q_ready, compute_q_valid, compute_q_ready;
  logic           store_q_valid, store_q_ready;
  logic [$clog2(QueueDepth):0] load_q_count, compute_q_count, store_q_count;
  logic           cmd_err_valid;
  logic [3:0]     cmd_err_code;
  logic [31:0]    cmd_err_index;
  logic           cmd_busy, cmd_quiet;

  // Command-fetch DMA port.
  logic        cf_req_valid, cf_req_ready, cf_rd_valid, cf_rd_ready;
  logic [63:0] cf_req_addr, cf_req_stride;
  logic [15:0] cf_req_row_bytes, cf_req_rows;

  // Shared read-DMA data.
  logic [AxiDataW-1:0] dr_data;
  logic [1:0]          dr_resp;
  logic                dr_last;

  nmsa_cmd #(
    .AxiDataW      (AxiDataW),
    .Rows          (Rows),
    .Cols          (Cols),
    .N             (N),
    .M             (M),
    .Sparse        (Sparse),
    .ActEntries    (ActEntries),
    .ActEntryBytes (ActEntryBits / 8),
    .WgtRecords    (WgtRecords),
    .RecordBytes   (RecordW / 8),
    .EpiEntries     (EpiEntries),
    .AccEntries     (AccEntries),
    .FetchChunkCmds (FetchChunkCmds),
    .FetchChunks    (FetchChunks),
    .BlockRamFifos  (BlockRamFifos)
  ) u_cmd (
    .clk_i           (clk_i),
    .rst_ni          (rst_ni),
    .clear_i         (clear),
    .abort_i         (abort),
    .start_i         (run_start),
    .base_i          (cmd_base),
    .count_i         (cmd_count),
    .req_valid_o     (cf_req_valid),
    .req_ready_i     (cf_req_ready),
    .req_addr_o      (cf_req_addr),
    .req_row_bytes_o (cf_req_row_bytes),
    .req_rows_o      (cf_req_rows),
    .req_stride_o    (cf_req_stride),
    .rd_valid_i      (cf_rd_valid),
    .rd_ready_o      (cf_rd_ready),
    .rd_data_i       (dr_data),
    .rd_resp_i       (dr_resp),
    .rd_last_i       (dr_last),
    .cmd_o           (dispatch_cmd),
    .load_valid_o    (disp_load_valid),
    .load_ready_i    (disp_load_ready),
    .compute_valid_o (disp_compute_valid),
    .compute_ready_i (disp_compute_ready),
    .store_valid_o   (disp_store_valid),
    .store_ready_i   (disp_store_ready),
    .err_valid_o     (cmd_err_valid),
    .err_code_o      (cmd_err_code),
    .err_index_o     (cmd_err_index),
    .busy_o          (cmd_busy),
    .quiet_o         (cmd_quiet)
  );

  nmsa_fifo #(.Width (nmsa_pkg::CmdTW), .Depth (QueueDepth)) u_load_q (
    .clk_i (clk_i), .rst_ni (rst_ni), .flush_i (clear | abort),
    .in_valid_i (disp_load_valid), .in_ready_o (disp_load_ready), .in_data_i (dispatch_cmd),
    .out_valid_o (load_q_valid), .out_ready_i (load_q_ready), .out_data_o (load_cmd),
    .count_o (load_q_count)
  );
  nmsa_fifo #(.Width (nmsa_pkg::CmdTW), .Depth (QueueDepth)) u_compute_q (
    .clk_i (clk_i), .rst_ni (rst_ni), .flush_i (clear | abort),
    .in_valid_i (disp_compute_valid), .in_ready_o (disp_compute_ready), .in_data_i (dispatch_cmd),
    .out_valid_o (compute_q_valid), .out_ready_i (compute_q_ready), .out_data_o (compute_cmd),
    .count_o (compute_q_count)
  );
  nmsa_fifo #(.Width (nmsa_pkg::CmdTW), .Depth (QueueDepth)) u_store_q (
    .clk_i (clk_i), .rst_ni (rst_ni), .flush_i (clear | abort),
    .in_valid_i (disp_store_valid), .in_ready_o (disp_store_ready), .in_data_i (dispatch_cmd),
    .out_valid_o (store_q_valid), .out_ready_i (store_q_ready), .out_data_o (store_cmd),
    .count_o (store_q_count)
  );

  // Token counters: index 0 load->compute, 1 compute->load, 2 compute->store, 3 store->compute.
  logic [3:0]      tok_push, tok_pop, tok_avail, tok_overflow;
  logic [TokW-1:0] tok_q [4];

  for (genvar t = 0; t < 4; t++) begin : g_token
    logic [TokW-1:0] tok_d;
    always_comb begin
      tok_d = tok_q[t] + TokW'(tok_push[t]) - TokW'(tok_pop[t]);
    end
    assign tok_avail[t] = tok_q[t] != '0;
    // An overflow is flagged the cycle after the push that wrapped the counter: the flag goes
    // only to the error logic, and registering it keeps the engines' handshakes out of the
    // error select.
    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni) begin
        tok_q[t]        <= '0;
        tok_overflow[t] <= 1'b0;
      end else if (clear || run_start) begin
        tok_q[t]        <= '0;
        tok_overflow[t] <= 1'b0;
      end else begin
        tok_q[t]        <= tok_d;
        tok_overflow[t] <= tok_push[t] && !tok_pop[t] && tok_q[t] == '1;
      end
    end
  end

  // ---------------------------------------------------------------------------------------------
  // AXI4 master: a register slice on each channel, between the DMA engines (m_*) and the ports.
  // ---------------------------------------------------------------------------------------------
  localparam int unsigned AddrChW = 1 + 64 + 8 + 3 + 2 + 4 + 3;   // id, addr, len, size, burst, ...

  logic                m_ar_valid, m_ar_ready, m_ar_id;
  logic [63:0]         m_ar_addr;
  logic [7:0]          m_ar_len;
  logic [2:0]          m_ar_size, m_ar_prot;
  logic [1:0]          m_ar_burst;
  logic [3:0]          m_ar_cache;
  logic                m_r_valid, m_r_ready, m_r_id, m_r_last;
  logic [AxiDataW-1:0] m_r_data;
  logic [1:0]          m_r_resp;
  logic                m_aw_valid, m_aw_ready, m_aw_id;
  logic [63:0]         m_aw_addr;
  logic [7:0]          m_aw_len;
  logic [2:0]          m_aw_size, m_aw_prot;
  logic [1:0]          m_aw_burst;
  logic [3:0]          m_aw_cache;
  logic                m_w_valid, m_w_ready, m_w_last;
  logic [AxiDataW-1:0] m_w_data;
  logic [AxiDataW/8-1:0] m_w_strb;
  logic                m_b_valid, m_b_ready, m_b_id;
  logic [1:0]          m_b_resp;

  nmsa_reg_slice #(.Width (AddrChW)) u_ar_slice (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .in_valid_i  (m_ar_valid),
    .in_ready_o  (m_ar_ready),
    .in_data_i   ({m_ar_id, m_ar_addr, m_ar_len, m_ar_size, m_ar_burst, m_ar_cache, m_ar_prot}),
    .out_valid_o (ar_valid_o),
    .out_ready_i (ar_ready_i),
    .out_data_o  ({ar_id_o, ar_addr_o, ar_len_o, ar_size_o, ar_burst_o, ar_cache_o, ar_prot_o})
  );

  nmsa_reg_slice #(.Width (AxiDataW + 4)) u_r_slice (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .in_valid_i  (r_valid_i),
    .in_ready_o  (r_ready_o),
    .in_data_i   ({r_id_i, r_data_i, r_resp_i, r_last_i}),
    .out_valid_o (m_r_valid),
    .out_ready_i (m_r_ready),
    .out_data_o  ({m_r_id, m_r_data, m_r_resp, m_r_last})
  );

  nmsa_reg_slice #(.Width (AddrChW)) u_aw_slice (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .in_valid_i  (m_aw_valid),
    .in_ready_o  (m_aw_ready),
    .in_data_i   ({m_aw_id, m_aw_addr, m_aw_len, m_aw_size, m_aw_burst, m_aw_cache, m_aw_prot}),
    .out_valid_o (aw_valid_o),
    .out_ready_i (aw_ready_i),
    .out_data_o  ({aw_id_o, aw_addr_o, aw_len_o, aw_size_o, aw_burst_o, aw_cache_o, aw_prot_o})
  );

  nmsa_reg_slice #(.Width (AxiDataW + AxiDataW / 8 + 1)) u_w_slice (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .in_valid_i  (m_w_valid),
    .in_ready_o  (m_w_ready),
    .in_data_i   ({m_w_data, m_w_strb, m_w_last}),
    .out_valid_o (w_valid_o),
    .out_ready_i (w_ready_i),
    .out_data_o  ({w_data_o, w_strb_o, w_last_o})
  );

  nmsa_reg_slice #(.Width (3)) u_b_slice (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .in_valid_i  (b_valid_i),
    .in_ready_o  (b_ready_o),
    .in_data_i   ({b_id_i, b_resp_i}),
    .out_valid_o (m_b_valid),
    .out_ready_i (m_b_ready),
    .out_data_o  ({m_b_id, m_b_resp})
  );

  // ---------------------------------------------------------------------------------------------
  // Read DMA, shared by command fetch (priority) and the load engine
  // ---------------------------------------------------------------------------------------------
  logic        ld_req_valid, ld_req_ready, ld_rd_valid, ld_rd_ready;
  logic [63:0] ld_req_addr, ld_req_stride;
  logic [15:0] ld_req_row_bytes, ld_req_rows;
  logic        dr_req_valid, dr_req_ready, dr_valid, dr_ready, dr_busy;
  logic [63:0] dr_req_addr, dr_req_stride;
  logic [15:0] dr_req_row_bytes, dr_req_rows;
  logic        owner_in_ready, owner_valid, owner, grant_cf;
  logic [$clog2(ReadRequests):0] owner_count;

  // One request register in front of the DMA: a request, once taken from fetch (priority) or
  // load, stays presented unchanged until the DMA accepts it, whatever its requester does
  // meanwhile: once here, it counts as taken by the DMA (its requester expects the data), so it
  // is served even after an abort. Fetch and load make no request during an abort.
  logic        rq_valid_q, rq_owner_q, rq_take;
  logic [63:0] rq_addr_q, rq_stride_q;
  logic [15:0] rq_row_bytes_q, rq_rows_q;

  assign grant_cf     = cf_req_valid;
  assign rq_take      = (!rq_valid_q || (dr_req_ready && owner_in_ready)) &&
                        (cf_req_valid || ld_req_valid);
  assign cf_req_ready = rq_take && grant_cf;
  assign ld_req_ready = rq_take && !grant_cf;

  assign dr_req_valid     = rq_valid_q && owner_in_ready;
  assign dr_req_addr      = rq_addr_q;
  assign dr_req_row_bytes = rq_row_bytes_q;
  assign dr_req_rows      = rq_rows_q;
  assign dr_req_stride    = rq_stride_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rq_valid_q <= 1'b0;
    end else if (rq_take) begin
      rq_valid_q <= 1'b1;
    end else if (dr_req_valid && dr_req_ready) begin
      rq_valid_q <= 1'b0;
    end
  end

  always_ff @(posedge clk_i) begin
    if (rq_take) begin
      rq_owner_q     <= !grant_cf;
      rq_addr_q      <= grant_cf ? cf_req_addr      : ld_req_addr;
      rq_row_bytes_q <= grant_cf ? cf_req_row_bytes : ld_req_row_bytes;
      rq_rows_q      <= grant_cf ? cf_req_rows      : ld_req_rows;
      rq_stride_q    <= grant_cf ? cf_req_stride    : ld_req_stride;
    end
  end

  // Data returns in request order: a FIFO of owners routes it (0 fetch, 1 load).
  nmsa_fifo #(.Width (1), .Depth (ReadRequests)) u_owner (
    .clk_i (clk_i), .rst_ni (rst_ni), .flush_i (1'b0),
    .in_valid_i (dr_req_valid && dr_req_ready), .in_ready_o (owner_in_ready),
    .in_data_i (rq_owner_q),
    .out_valid_o (owner_valid), .out_ready_i (dr_valid && dr_ready && dr_last),
    .out_data_o (owner), .count_o (owner_count)
  );

  assign cf_rd_valid = dr_valid && owner_valid && !owner;
  assign ld_rd_valid = dr_valid && owner_valid && owner;
  assign dr_ready    = owner_valid && (owner ? ld_rd_ready : cf_rd_ready);

  nmsa_dma_rd #(
    .AddrW          (64),
    .AxiDataW       (AxiDataW),
    .LenW           (16),
    .MaxBurstBeats  (MaxBurstBeats),
    .MaxOutstanding (MaxOutstanding)
  ) u_dma_rd (
    .clk_i           (clk_i),
    .rst_ni          (rst_ni),
    .req_valid_i     (dr_req_valid),
    .req_ready_o     (dr_req_ready),
    .req_addr_i      (dr_req_addr),
    .req_row_bytes_i (dr_req_row_bytes),
    .req_rows_i      (dr_req_rows),
    .req_stride_i    (dr_req_stride),
    .req_cancel_i    (1'b0),
    .rd_valid_o      (dr_valid),
    .rd_ready_i      (dr_ready),
    .rd_data_o       (dr_data),
    .rd_resp_o       (dr_resp),
    .rd_last_o       (dr_last),
    .ar_valid_o      (m_ar_valid),
    .ar_ready_i      (m_ar_ready),
    .ar_id_o         (m_ar_id),
    .ar_addr_o       (m_ar_addr),
    .ar_len_o        (m_ar_len),
    .ar_size_o       (m_ar_size),
    .ar_burst_o      (m_ar_burst),
    .ar_cache_o      (m_ar_cache),
    .ar_prot_o       (m_ar_prot),
    .r_valid_i       (m_r_valid),
    .r_ready_o       (m_r_ready),
    .r_id_i          (m_r_id),
    .r_data_i        (m_r_data),
    .r_resp_i        (m_r_resp),
    .r_last_i        (m_r_last),
    .busy_o          (dr_busy)
  );

  // ---------------------------------------------------------------------------------------------
  // Buffers
  // ---------------------------------------------------------------------------------------------
  logic                wb_en;
  logic [3:0]          wb_target;
  logic [15:0]         wb_entry;
  logic [7:0]          wb_lane;
  logic [AxiDataW-1:0] wb_data;

  logic                         act_rd_en;
  logic [$clog2(ActEntries)-1:0] act_rd_addr;
  logic [ActEntryBits-1:0]      act_rd_data;
  logic                         wgt_rd_en;
  logic [$clog2(WgtRecords)-1:0] wgt_rd_addr;
  logic [RecordW-1:0]           wgt_rd_data;
  logic                         epi_rd_en;
  logic [$clog2(EpiEntries*EpiGroups)-1:0] epi_rd_addr;
  logic [EpiSubBits-1:0]        epi_rd_data;
  logic                         acc_rd0_en, acc_rd1_en, acc_wr_en;
  logic [$clog2(AccEntries)-1:0] acc_rd0_addr, acc_rd1_addr, acc_wr_addr;
  logic [2*AccRowW-1:0]         acc_rd_data;
  logic [AccRowW-1:0]           acc_wr_data;

  nmsa_spad #(.Depth (ActEntries), .Lanes (ActBeats), .LaneW (AxiDataW), .NumRd (1)) u_act (
    .clk_i        (clk_i),
    .wr_en_i      (wb_en && wb_target == nmsa_pkg::TargetAct),
    .wr_addr_i    (wb_entry[$clog2(ActEntries)-1:0]),
    .wr_lane_en_i (ActBeats'(1) << wb_lane),
    .wr_data_i    ({ActBeats{wb_data}}),
    .rd_en_i      (act_rd_en),
    .rd_addr_i    (act_rd_addr),
    .rd_data_o    (act_rd_data)
  );
  nmsa_spad #(.Depth (WgtRecords), .Lanes (WgtBeats), .LaneW (AxiDataW), .NumRd (1)) u_wgt (
    .clk_i        (clk_i),
    .wr_en_i      (wb_en && wb_target == nmsa_pkg::TargetWgt),
    .wr_addr_i    (wb_entry[$clog2(WgtRecords)-1:0]),
    .wr_lane_en_i (WgtBeats'(1) << wb_lane),
    .wr_data_i    ({WgtBeats{wb_data}}),
    .rd_en_i      (wgt_rd_en),
    .rd_addr_i    (wgt_rd_addr),
    .rd_data_o    (wgt_rd_data)
  );
  nmsa_spad #(
    .Depth (EpiEntries * EpiGroups),
    .Lanes (EpiSubBeats),
    .LaneW (AxiDataW),
    .NumRd (1)
  ) u_epi (
    .clk_i        (clk_i),
    .wr_en_i      (wb_en && wb_target == nmsa_pkg::TargetEpi),
    .wr_addr_i    (wb_entry[$clog2(EpiEntries*EpiGroups)-1:0]),
    .wr_lane_en_i (EpiSubBeats'(1) << wb_lane),
    .wr_data_i    ({EpiSubBeats{wb_data}}),
    .rd_en_i      (epi_rd_en),
    .rd_addr_i    (epi_rd_addr),
    .rd_data_o    (epi_rd_data)
  );
  // Accumulators: read port 0 for the compute engine's read-modify-write, port 1 for stores.
  nmsa_spad #(.Depth (AccEntries), .Lanes (1), .LaneW (AccRowW), .NumRd (2)) u_acc (
    .clk_i        (clk_i),
    .wr_en_i      (acc_wr_en),
    .wr_addr_i    (acc_wr_addr),
    .wr_lane_en_i (1'b1),
    .wr_data_i    (acc_wr_data),
    .rd_en_i      ({acc_rd1_en, acc_rd0_en}),
    .rd_addr_i    ({acc_rd1_addr, acc_rd0_addr}),
    .rd_data_o    (acc_rd_data)
  );

  // ---------------------------------------------------------------------------------------------
  // Engines
  // ---------------------------------------------------------------------------------------------
  logic        ld_err_valid, st_err_valid, cp_err_valid;
  logic [1:0]  ld_err_resp, st_err_resp;
  logic [31:0] ld_err_index, st_err_index, cp_err_index;
  logic        ld_busy, cp_busy, st_busy;
  logic        stat_beat, stat_beat_dense, stat_tile_sparse, stat_tile_dense;
  logic [Cols-1:0] stat_illegal;
  logic        stat_dma_stall;

  nmsa_load #(
    .AxiDataW  (AxiDataW),
    .ActBeats  (ActBeats),
    .WgtBeats  (WgtBeats),
    .EpiBeats  (EpiSubBeats),
    .EpiGroups (EpiGroups),
    .PendDepth (PendingLoads)
  ) u_load (
    .clk_i           (clk_i),
    .rst_ni          (rst_ni),
    .clear_i         (clear),
    .abort_i         (abort),
    .cmd_valid_i     (load_q_valid),
    .cmd_ready_o     (load_q_ready),
    .cmd_i           (load_cmd),
    .c2l_avail_i     (tok_avail[1]),
    .c2l_pop_o       (tok_pop[1]),
    .l2c_push_o      (tok_push[0]),
    .req_valid_o     (ld_req_valid),
    .req_ready_i     (ld_req_ready),
    .req_addr_o      (ld_req_addr),
    .req_row_bytes_o (ld_req_row_bytes),
    .req_rows_o      (ld_req_rows),
    .req_stride_o    (ld_req_stride),
    .rd_valid_i      (ld_rd_valid),
    .rd_ready_o      (ld_rd_ready),
    .rd_data_i       (dr_data),
    .rd_resp_i       (dr_resp),
    .rd_last_i       (dr_last),
    .wr_en_o         (wb_en),
    .wr_target_o     (wb_target),
    .wr_entry_o      (wb_entry),
    .wr_lane_o       (wb_lane),
    .wr_data_o       (wb_data),
    .err_valid_o     (ld_err_valid),
    .err_resp_o      (ld_err_resp),
    .err_index_o     (ld_err_index),
    .busy_o          (ld_busy)
  );

  nmsa_compute #(
    .Rows       (Rows),
    .Cols       (Cols),
    .N          (N),
    .M          (M),
    .DataW      (DataW),
    .AccW       (AccW),
    .Sparse     (Sparse),
    .ActEntries (ActEntries),
    .WgtRecords (WgtRecords),
    .AccEntries (AccEntries),
    .RecordW    (RecordW),
    .BlockRamFifos (BlockRamFifos)
  ) u_compute (
    .clk_i              (clk_i),
    .rst_ni             (rst_ni),
    .clear_i            (clear),
    .abort_i            (abort),
    .cmd_valid_i        (compute_q_valid),
    .cmd_ready_o        (compute_q_ready),
    .cmd_i              (compute_cmd),
    .l2c_avail_i        (tok_avail[0]),
    .l2c_pop_o          (tok_pop[0]),
    .s2c_avail_i        (tok_avail[3]),
    .s2c_pop_o          (tok_pop[3]),
    .c2l_push_o         (tok_push[1]),
    .c2s_push_o         (tok_push[2]),
    .wgt_rd_en_o        (wgt_rd_en),
    .wgt_rd_addr_o      (wgt_rd_addr),
    .wgt_rd_data_i      (wgt_rd_data),
    .act_rd_en_o        (act_rd_en),
    .act_rd_addr_o      (act_rd_addr),
    .act_rd_data_i      (act_rd_data),
    .acc_rd_en_o        (acc_rd0_en),
    .acc_rd_addr_o      (acc_rd0_addr),
    .acc_rd_data_i      (acc_rd_data[0 +: AccRowW]),
    .acc_wr_en_o        (acc_wr_en),
    .acc_wr_addr_o      (acc_wr_addr),
    .acc_wr_data_o      (acc_wr_data),
    .err_valid_o        (cp_err_valid),
    .err_index_o        (cp_err_index),
    .busy_o             (cp_busy),
    .stat_beat_o        (stat_beat),
    .stat_beat_dense_o  (stat_beat_dense),
    .stat_tile_sparse_o (stat_tile_sparse),
    .stat_tile_dense_o  (stat_tile_dense),
    .stat_illegal_o     (stat_illegal),
    .stat_dma_stall_o   (stat_dma_stall)
  );

  logic        dw_req_valid, dw_req_ready, dw_valid, dw_ready, dw_cpl_valid, dw_busy;
  logic [63:0] dw_req_addr, dw_req_stride;
  logic [15:0] dw_req_row_bytes, dw_req_rows;
  logic [AxiDataW-1:0] dw_data;
  logic [1:0]  dw_cpl_resp;
  // The store's beats after the register slice, as the write DMA takes them.
  logic                dws_valid, dws_ready;
  logic [AxiDataW-1:0] dws_data;

  nmsa_store #(
    .Cols       (Cols),
    .AccW       (AccW),
    .AccEntries (AccEntries),
    .EpiEntries (EpiEntries),
    .EpiLanes   (EpiLanes),
    .AxiDataW   (AxiDataW),
    .RowSlots   (StoreRowSlots),
    .BlockRamFifos (BlockRamFifos)
  ) u_store (
    .clk_i           (clk_i),
    .rst_ni          (rst_ni),
    .clear_i         (clear),
    .abort_i         (abort),
    .cmd_valid_i     (store_q_valid),
    .cmd_ready_o     (store_q_ready),
    .cmd_i           (store_cmd),
    .c2s_avail_i     (tok_avail[2]),
    .c2s_pop_o       (tok_pop[2]),
    .s2c_push_o      (tok_push[3]),
    .epi_rd_en_o     (epi_rd_en),
    .epi_rd_addr_o   (epi_rd_addr),
    .epi_rd_data_i   (epi_rd_data),
    .acc_rd_en_o     (acc_rd1_en),
    .acc_rd_addr_o   (acc_rd1_addr),
    .acc_rd_data_i   (acc_rd_data[AccRowW +: AccRowW]),
    .req_valid_o     (dw_req_valid),
    .req_ready_i     (dw_req_ready),
    .req_addr_o      (dw_req_addr),
    .req_row_bytes_o (dw_req_row_bytes),
    .req_rows_o      (dw_req_rows),
    .req_stride_o    (dw_req_stride),
    .wr_valid_o      (dw_valid),
    .wr_ready_i      (dw_ready),
    .wr_data_o       (dw_data),
    .cpl_valid_i     (dw_cpl_valid),
    .cpl_resp_i      (dw_cpl_resp),
    .err_valid_o     (st_err_valid),
    .err_resp_o      (st_err_resp),
    .err_index_o     (st_err_index),
    .busy_o          (st_busy)
  );

  // Register slice between the store engine's beats and the write DMA. The store's row FIFO sits
  // beside the accumulators, the DMA beside the AXI slices; without the slice one handshake
  // (FIFO valid, DMA W pending, W slice ready) steered both the FIFO's pointers and the DMA's W
  // head, and crossed the device twice in one cycle. A beat now reaches the DMA a cycle later.
  nmsa_reg_slice #(.Width (AxiDataW)) u_dw_slice (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .in_valid_i  (dw_valid),
    .in_ready_o  (dw_ready),
    .in_data_i   (dw_data),
    .out_valid_o (dws_valid),
    .out_ready_i (dws_ready),
    .out_data_o  (dws_data)
  );

  nmsa_dma_wr #(
    .AddrW          (64),
    .AxiDataW       (AxiDataW),
    .LenW           (16),
    .MaxBurstBeats  (MaxBurstBeats),
    .MaxOutstanding (MaxOutstanding)
  ) u_dma_wr (
    .clk_i           (clk_i),
    .rst_ni          (rst_ni),
    .req_valid_i     (dw_req_valid),
    .req_ready_o     (dw_req_ready),
    .req_addr_i      (dw_req_addr),
    .req_row_bytes_i (dw_req_row_bytes),
    .req_rows_i      (dw_req_rows),
    .req_stride_i    (dw_req_stride),
    .req_cancel_i    (abort),
    .wr_valid_i      (dws_valid),
    .wr_ready_o      (dws_ready),
    .wr_data_i       (dws_data),
    .cpl_valid_o     (dw_cpl_valid),
    .cpl_resp_o      (dw_cpl_resp),
    .aw_valid_o      (m_aw_valid),
    .aw_ready_i      (m_aw_ready),
    .aw_id_o         (m_aw_id),
    .aw_addr_o       (m_aw_addr),
    .aw_len_o        (m_aw_len),
    .aw_size_o       (m_aw_size),
    .aw_burst_o      (m_aw_burst),
    .aw_cache_o      (m_aw_cache),
    .aw_prot_o       (m_aw_prot),
    .w_valid_o       (m_w_valid),
    .w_ready_i       (m_w_ready),
    .w_data_o        (m_w_data),
    .w_strb_o        (m_w_strb),
    .w_last_o        (m_w_last),
    .b_valid_i       (m_b_valid),
    .b_ready_o       (m_b_ready),
    .b_id_i          (m_b_id),
    .b_resp_i        (m_b_resp),
    .busy_o          (dw_busy)
  );


  // ---------------------------------------------------------------------------------------------
  // Run control and errors
  // ---------------------------------------------------------------------------------------------
  logic        all_idle, all_idle_q, stalled;

  assign all_idle = !cmd_busy && !load_q_valid && !compute_q_valid && !store_q_valid &&
                    !ld_busy && !cp_busy && !st_busy && !dr_busy && !dw_busy && !owner_valid &&
                    !rq_valid_q;
  assign stalled  = cmd_quiet && !ld_busy && !cp_busy && !st_busy && !dr_busy && !dw_busy &&
                    !owner_valid && !rq_valid_q && (load_q_valid || compute_q_valid || store_q_valid);

  // all_idle ANDs the busy flags of every engine and queue, which sit all over the device; the
  // run control reads it registered, so that no engine's state reaches its run state in the same
  // cycle. The run therefore ends a cycle later. The START cycle reads as busy: the engines show
  // busy only from the next cycle on, and the run must not end on the idle of the cycle before.
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      all_idle_q <= 1'b1;
    end else begin
      all_idle_q <= all_idle && !run_start;
    end
  end

  nmsa_run_ctrl #(.AlignBits ($clog2(AxiDataW / 8))) u_run_ctrl (
    .clk_i           (clk_i),
    .rst_ni          (rst_ni),
    .start_i         (start),
    .soft_reset_i    (soft_reset),
    .base_low_i      (cmd_base[$clog2(AxiDataW/8)-1:0]),
    .all_idle_i      (all_idle_q),
    .stalled_i       (stalled),
    .waiting_i       ({store_q_valid, compute_q_valid, load_q_valid}),
    .waiting_index_i ({store_cmd.index, compute_cmd.index, load_cmd.index}),
    .tok_overflow_i  (|tok_overflow),
    .cmd_err_valid_i (cmd_err_valid),
    .cmd_err_code_i  (cmd_err_code),
    .cmd_err_index_i (cmd_err_index),
    .cp_err_valid_i  (cp_err_valid),
    .cp_err_index_i  (cp_err_index),
    .ld_err_valid_i  (ld_err_valid),
    .ld_err_resp_i   (ld_err_resp),
    .ld_err_index_i  (ld_err_index),
    .st_err_valid_i  (st_err_valid),
    .st_err_resp_i   (st_err_resp),
    .st_err_index_i  (st_err_index),
    .run_start_o     (run_start),
    .abort_o         (abort),
    .clear_o         (clear),
    .busy_o          (busy),
    .done_o          (done),
    .err_o           (err),
    .err_code_o      (err_code),
    .err_index_o     (err_index),
    .irq_done_set_o  (irq_done_set),
    .irq_error_set_o (irq_error_set)
  );

  // ---------------------------------------------------------------------------------------------
  // Performance counters (docs/registers.md)
  // ---------------------------------------------------------------------------------------------
  // META_BYTES counts the bytes of each loaded weight beat that fall in the metadata field of its
  // record (bytes [ValBytes, ValBytes + MetaBytes) of the record).
  localparam int unsigned ValBytes  = Cols * N * DataW / 8;
  localparam int unsigned MetaBytes = Sparse ? Cols * N * IdxW / 8 : 0;
  localparam int unsigned BeatBytes = AxiDataW / 8;

  if (Sparse && (Cols * N * IdxW) % 8 != 0) begin : g_bad_meta_bytes
    $error("nmsa_top: the metadata of a PE row must be whole bytes");
  end

  function automatic logic [IncW-1:0] meta_bytes_in_lane(logic [7:0] lane);
    int unsigned lo, hi, first, last;
    lo = 32'(lane) * BeatBytes;
    hi = lo + BeatBytes;
    first = lo > ValBytes ? lo : ValBytes;
    last = hi < ValBytes + MetaBytes ? hi : ValBytes + MetaBytes;
    meta_bytes_in_lane = last > first ? IncW'(last - first) : '0;
  endfunction
  logic [IncW-1:0] wr_bytes, illegal_fields;

  always_comb begin
    wr_bytes = '0;
    for (int unsigned b = 0; b < AxiDataW / 8; b++) begin
      wr_bytes = wr_bytes + IncW'(w_strb_o[b]);
    end
    illegal_fields = '0;
    for (int unsigned c = 0; c < Cols; c++) begin
      illegal_fields = illegal_fields + IncW'(stat_illegal[c]);
    end
  end

  always_comb begin
    cnt_inc = '0;
    cnt_inc[nmsa_reg_pkg::NMSA_CNT_CYCLES_TOTAL_IDX * IncW +: IncW]   = IncW'(1);
    cnt_inc[nmsa_reg_pkg::NMSA_CNT_CYCLES_BUSY_IDX * IncW +: IncW]    = IncW'(busy);
    cnt_inc[nmsa_reg_pkg::NMSA_CNT_CYCLES_COMPUTE_IDX * IncW +: IncW] = IncW'(stat_beat);
    cnt_inc[nmsa_reg_pkg::NMSA_CNT_CYCLES_DMA_STALL_IDX * IncW +: IncW] = IncW'(stat_dma_stall);
    cnt_inc[nmsa_reg_pkg::NMSA_CNT_MACS_IDX * IncW +: IncW] =
        !stat_beat ? '0 : stat_beat_dense ? IncW'(Rows * Cols * N) : IncW'(Rows * Cols * M);
    cnt_inc[nmsa_reg_pkg::NMSA_CNT_TILES_SPARSE_IDX * IncW +: IncW] = IncW'(stat_tile_sparse);
    cnt_inc[nmsa_reg_pkg::NMSA_CNT_TILES_DENSE_IDX * IncW +: IncW]  = IncW'(stat_tile_dense);
    cnt_inc[nmsa_reg_pkg::NMSA_CNT_DMA_RD_BYTES_IDX * IncW +: IncW] =
        (r_valid_i && r_ready_o) ? IncW'(AxiDataW / 8) : '0;
    cnt_inc[nmsa_reg_pkg::NMSA_CNT_DMA_WR_BYTES_IDX * IncW +: IncW] =
        (w_valid_o && w_ready_i) ? wr_bytes : '0;
    cnt_inc[nmsa_reg_pkg::NMSA_CNT_META_BYTES_IDX * IncW +: IncW] =
        (wb_en && wb_target == nmsa_pkg::TargetWgt) ? meta_bytes_in_lane(wb_lane) : '0;
    cnt_inc[nmsa_reg_pkg::NMSA_CNT_ILLEGAL_META_IDX * IncW +: IncW] = illegal_fields;
    cnt_inc[nmsa_reg_pkg::NMSA_CNT_AXI_ERRORS_IDX * IncW +: IncW] =
        IncW'(r_valid_i && r_ready_o && r_resp_i != 2'b00) +
        IncW'(b_valid_i && b_ready_o && b_resp_i != 2'b00);
  end

  // The increments reach the counters one cycle later (a register between the engines and the
  // 64-bit adders); those of the cycle that completes a soft reset are dropped with the counts.
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      cnt_inc_q <= '0;
    end else begin
      cnt_inc_q <= clear ? '0 : cnt_inc;
    end
  end

`ifndef SYNTHESIS
  // ---------------------------------------------------------------------------------------------
  // Error semantics (docs/errors.md): from the abort on, until the soft reset's clear, nothing
  // new starts: no command is fetched, dispatched or taken by an engine, no fetch or load request
  // is taken and no write request reaches the DMA (a read request already in the request register
  // is served, as its requester expects the data). Token counters never underflow.
  // ---------------------------------------------------------------------------------------------
  always @(posedge clk_i or negedge rst_ni) begin
    if (rst_ni && abort) begin
      assert (!(dw_req_valid && dw_req_ready))
        else $error("nmsa_top: a write request reached the DMA after an abort");
      assert (!rq_take)
        else $error("nmsa_top: a fetch or load request was taken after an abort");
      assert (!((disp_load_valid && disp_load_ready) || (disp_compute_valid && disp_compute_ready) ||
                (disp_store_valid && disp_store_ready)))
        else $error("nmsa_top: a command was dispatched after an abort");
      assert (!((load_q_valid && load_q_ready) || (compute_q_valid && compute_q_ready) ||
                (store_q_valid && store_q_ready)))
        else $error("nmsa_top: an engine started a command after an abort");
    end
    if (rst_ni) begin
      for (int t = 0; t < 4; t++) begin
        assert (!tok_pop[t] || tok_avail[t])
          else $error("nmsa_top: token counter %0d popped while empty", t);
      end
    end
  end
`endif

  // Queue fill levels are for waveforms only; entry bits above a buffer's depth were range-checked
  // by the command processor.
  logic unused;
  assign unused = ^{load_q_count, compute_q_count, store_q_count, owner_count, wb_entry};

endmodule

`default_nettype wire
