// spmd-bench-gloo RANK SIZE STORE_DIR [sweep args]: one process of the Gloo baseline (TCP on
// loopback, the transport Gloo offers on one machine), rendezvous through a file store.
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "spmd-bench/collective_sweep.h"

namespace {

class GlooImpl final : public spmd::bench::CollectiveImpl {
 public:
  GlooImpl(int rank, int size, const std::string& dir) : rank_(rank), size_(size), store_(dir) {
    gloo::transport::tcp::attr attr;
    attr.hostname = "127.0.0.1";
    device_ = gloo::transport::tcp::CreateDevice(attr);
    context_ = std::make_shared<gloo::rendezvous::Context>(rank, size);
    context_->connectFullMesh(store_, device_);
  }
  int rank() override { return rank_; }
  int size() override { return size_; }
  const char* name() override { return "gloo"; }
  std::string transport() override { return "tcp"; }
  bool supports(const std::string& op) override { return op != "reduce_scatter"; }
  void run(const std::string& op, const float* cin, float* out, size_t count) override {
    auto* in = const_cast<float*>(cin);
    if (op == "all_reduce") {
      gloo::AllreduceOptions o(context_);
      o.setInput(in, count);
      o.setOutput(out, count);
      o.setReduceFunction(
          static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
      gloo::allreduce(o);
    } else if (op == "all_gather") {
      gloo::AllgatherOptions o(context_);
      o.setInput(in, count);
      o.setOutput(out, count * size_);
      gloo::allgather(o);
    } else if (op == "all_to_all") {
      gloo::AlltoallOptions o(context_);
      o.setInput(in, count * size_);
      o.setOutput(out, count * size_);
      gloo::alltoall(o);
    } else if (op == "broadcast") {
      gloo::BroadcastOptions o(context_);
      o.setOutput(out, count);
      o.setRoot(0);
      gloo::broadcast(o);
    }
  }
  void barrier() override {
    gloo::BarrierOptions o(context_);
    gloo::barrier(o);
  }
  bool all_true(bool mine) override {
    float v = mine ? 0.0f : 1.0f;
    float s = 0;
    run("all_reduce", &v, &s, 1);
    return s == 0.0f;
  }

 private:
  int rank_;
  int size_;
  gloo::rendezvous::FileStore store_;
  std::shared_ptr<gloo::transport::Device> device_;
  std::shared_ptr<gloo::rendezvous::Context> context_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: spmd-bench-gloo RANK SIZE STORE_DIR OPS SIZES [SECONDS]\n");
    return 2;
  }
  GlooImpl impl(std::stoi(argv[1]), std::stoi(argv[2]), argv[3]);
  spmd::bench::SweepOptions options;
  options.ops = spmd::bench::parse_list(argv[4]);
  options.sizes = spmd::bench::parse_sizes(argv[5]);
  if (argc > 6) options.seconds_per_point = std::stod(argv[6]);
  spmd::bench::sweep(impl, options);
  impl.barrier();
  return 0;
}
