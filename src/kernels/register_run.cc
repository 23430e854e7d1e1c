#include "kernels/register_run.h"

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>

#if defined(__x86_64__) && defined(__GNUC__)
#include <xbyak/xbyak.h>
#define SPMD_REGISTER_RUNS 1
#endif

namespace spmd::kernels {

int run_arity(RunOp::Kind kind) {
  switch (kind) {
    case RunOp::Kind::kNeg:
    case RunOp::Kind::kAbs:
    case RunOp::Kind::kSqrt:
      return 1;
    case RunOp::Kind::kMultiplyAdd:
      return 3;
    default:
      return 2;
  }
}

namespace {

// Registers 0-10 (ymm, or zmm in AVX-512's loop) hold the run's values; 11 an extreme's working
// register; 12-14 an op's operands read from memory (one per operand position; 14 also an
// extreme's mask, or AVX-512's zero); 15 the sign bit of every lane. AVX-512's loop keeps to the
// same sixteen, so that a program fits (run_fits) whatever the width.
constexpr int kValueRegisters = 11;
constexpr int kScratch = 11;
constexpr int kOperandTemps = 12;
constexpr int kSignMask = 15;

// Per op, the vector register its value is made in: values live at once get different ones, and
// an op's own is none of its operands' (a multiply-add copies its addend there first). Empty
// where the program does not fit or reads what it lacks.
struct Allocation {
  std::vector<int> reg;
  bool empty() const { return reg.empty(); }
};

// The lowest register set in `free`, taken out of it; -1 where none is.
int take(uint32_t& free) {
  if (free == 0) return -1;
  const int r = __builtin_ctz(free);
  free &= ~(1u << r);
  return r;
}

// For each op, the last op reading its value (itself where none does); empty where an op reads
// what the program lacks.
std::vector<size_t> last_reads(const RunProgram& p) {
  const size_t n = p.ops.size();
  std::vector<size_t> last_read(n);
  for (size_t k = 0; k < n; ++k) {
    const RunOp& op = p.ops[k];
    last_read[k] = k;
    if (op.store >= p.outputs) return {};
    for (int i = 0; i < run_arity(op.kind); ++i) {
      const int arg = op.args[static_cast<size_t>(i)];
      if (arg >= 0 && static_cast<size_t>(arg) >= p.scalar_slots.size()) return {};
      if (arg < 0 && static_cast<size_t>(-1 - arg) >= k) return {};
      if (arg < 0) last_read[static_cast<size_t>(-1 - arg)] = k;
    }
  }
  return last_read;
}

Allocation allocate(const RunProgram& p) {
  const size_t n = p.ops.size();
  const size_t pointers = p.scalar_slots.size() + static_cast<size_t>(p.outputs);
  if (n == 0 || pointers > kMaxRunPointers || p.outputs < 0) return {};
  const std::vector<size_t> last_read = last_reads(p);
  if (last_read.empty()) return {};
  Allocation a{std::vector<int>(n)};
  uint32_t free = (1u << kValueRegisters) - 1;
  for (size_t k = 0; k < n; ++k) {
    a.reg[k] = take(free);
    if (a.reg[k] < 0) return {};
    const RunOp& op = p.ops[k];
    for (int i = 0; i < run_arity(op.kind); ++i) {
      const int arg = op.args[static_cast<size_t>(i)];
      if (arg < 0 && last_read[static_cast<size_t>(-1 - arg)] == k) {
        free |= 1u << a.reg[static_cast<size_t>(-1 - arg)];
      }
    }
    if (last_read[k] == k) free |= 1u << a.reg[k];
  }
  return a;
}

// What this CPU can run: no runs, AVX2's or AVX-512's.
RunVectors cpu_vectors() {
#if defined(SPMD_REGISTER_RUNS)
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return RunVectors::kNone;
  return __builtin_cpu_supports("avx512f") ? RunVectors::kAvx512 : RunVectors::kAvx2;
#else
  return RunVectors::kNone;
#endif
}

// SPMD_CHAIN_REGISTERS: 0 none, avx2 the 256-bit loop, unset (or anything else) the widest.
RunVectors vectors_here() {
  const RunVectors cpu = cpu_vectors();
  const char* env = std::getenv("SPMD_CHAIN_REGISTERS");
  if (env != nullptr && std::strcmp(env, "0") == 0) return RunVectors::kNone;
  if (env != nullptr && std::strcmp(env, "avx2") == 0 && cpu != RunVectors::kNone) {
    return RunVectors::kAvx2;
  }
  return cpu;
}

}  // namespace

RunVectors register_run_vectors() {
  static const RunVectors vectors = vectors_here();
  return vectors;
}

bool register_run_vectors_supported(RunVectors v) {
  return v != RunVectors::kNone && static_cast<int>(v) <= static_cast<int>(cpu_vectors());
}

bool register_runs_enabled() { return register_run_vectors() != RunVectors::kNone; }

bool run_fits(const RunProgram& p) {
  return (p.dtype == DType::kFloat32 || p.dtype == DType::kFloat64) && !allocate(p).empty();
}

#if defined(SPMD_REGISTER_RUNS)
namespace {

// The general registers holding the slots' pointers, then the outputs'. rdi and rsi point at
// the two arrays, rdx is len, rcx the element index; rbx, rbp and r12-r15 are saved first.
constexpr std::array<int, kMaxRunPointers> kPointerRegisters = {
    Xbyak::Operand::R8,  Xbyak::Operand::R9,  Xbyak::Operand::R10, Xbyak::Operand::R11,
    Xbyak::Operand::RAX, Xbyak::Operand::RBX, Xbyak::Operand::RBP, Xbyak::Operand::R12,
    Xbyak::Operand::R13, Xbyak::Operand::R14, Xbyak::Operand::R15};

// The run's code: a loop over whole vectors (8 float32s or 4 float64s in ymm registers; 16 or 8
// in zmm registers for AVX-512), then one element at a time in the low lane of the same
// registers: scalar loads and stores, and the same packed instructions on the xmm parts, whose
// lane 0 is the element's. Each element gets the same instructions' IEEE results in every loop.
// Code buffer: 4 KiB and 512 bytes an op, twice what the longest op (an extreme, about 120 bytes
// a loop) takes in both loops.
class RunCode : public Xbyak::CodeGenerator {
 public:
  RunCode(const RunProgram& p, const Allocation& a, RunVectors width)
      : Xbyak::CodeGenerator(4096 + 512 * p.ops.size(), Xbyak::DontSetProtectRWE),
        p_(p),
        reg_(a.reg),
        f64_(p.dtype == DType::kFloat64),
        wide_(width == RunVectors::kAvx512),
        size_(f64_ ? 8 : 4) {
    prologue();
    const int lanes = (wide_ ? 64 : 32) / size_;
    Xbyak::Label vectors;
    Xbyak::Label tail;
    Xbyak::Label done;
    mov(rdi, rdx);
    and_(rdi, -lanes);
    xor_(ecx, ecx);
    L(vectors);
    cmp(rcx, rdi);
    jae(tail, T_NEAR);
    body(true);
    add(rcx, lanes);
    jmp(vectors, T_NEAR);
    L(tail);
    cmp(rcx, rdx);
    jae(done, T_NEAR);
    body(false);
    add(rcx, 1);
    jmp(tail, T_NEAR);
    L(done);
    vzeroupper();
    for (auto r = kSaved.rbegin(); r != kSaved.rend(); ++r) pop(Xbyak::Reg64(*r));
    ret();
    setProtectModeRE();  // written, now read and executed only
  }

  RunFunction function() const { return getCode<RunFunction>(); }

 private:
  static constexpr std::array<int, 6> kSaved = {Xbyak::Operand::RBX, Xbyak::Operand::RBP,
                                                Xbyak::Operand::R12, Xbyak::Operand::R13,
                                                Xbyak::Operand::R14, Xbyak::Operand::R15};

  // Saves the registers the loop takes, fills register 15 with the sign bit and loads the
  // pointers.
  void prologue() {
    for (int r : kSaved) push(Xbyak::Reg64(r));
    const Xbyak::Ymm sign = whole(kSignMask);
    if (f64_) {
      mov(rax, uint64_t{1} << 63);
      vmovq(Xbyak::Xmm(kSignMask), rax);
      vbroadcastsd(sign, Xbyak::Xmm(kSignMask));
    } else {
      mov(eax, uint32_t{1} << 31);
      vmovd(Xbyak::Xmm(kSignMask), eax);
      vbroadcastss(sign, Xbyak::Xmm(kSignMask));
    }
    const size_t slots = p_.scalar_slots.size();
    for (size_t s = 0; s < slots; ++s) mov(pointer(static_cast<int>(s)), ptr[rdi + 8 * s]);
    for (int o = 0; o < p_.outputs; ++o) {
      mov(pointer(static_cast<int>(slots) + o), ptr[rsi + size_t{8} * static_cast<size_t>(o)]);
    }
  }

  static Xbyak::Reg64 pointer(int i) {
    return Xbyak::Reg64(kPointerRegisters[static_cast<size_t>(i)]);
  }

  // Register `idx` as a whole vector: ymm, or zmm for AVX-512 (a Zmm is a kind of Ymm).
  Xbyak::Ymm whole(int idx) const { return wide_ ? Xbyak::Zmm(idx) : Xbyak::Ymm(idx); }

  // Register `idx` as a whole vector or as its low lane (xmm).
  Xbyak::Xmm vec(int idx, bool vector) const {
    return vector ? Xbyak::Xmm(whole(idx)) : Xbyak::Xmm(idx);
  }

  // d = a ^ b and d = ~a & b, bit by bit: AVX's float forms, or AVX-512 Foundation's integer ones
  // on zmm (its float forms need AVX-512 DQ). The same bits either way.
  void bit_xor(const Xbyak::Xmm& d, const Xbyak::Xmm& a, const Xbyak::Xmm& b) {
    d.isZMM() ? vpxord(d, a, b) : vxorps(d, a, b);
  }
  void bit_and_not(const Xbyak::Xmm& d, const Xbyak::Xmm& a, const Xbyak::Xmm& b) {
    d.isZMM() ? vpandnd(d, a, b) : vandnps(d, a, b);
  }

  Xbyak::Address element(int pointer_index) { return ptr[pointer(pointer_index) + rcx * size_]; }

  // Operand i of `op` in a register: its value's, or read from its slot into ymm12 + i.
  Xbyak::Xmm operand(const RunOp& op, int i, bool vector) {
    const int arg = op.args[static_cast<size_t>(i)];
    if (arg < 0) return vec(reg_[static_cast<size_t>(-1 - arg)], vector);
    const Xbyak::Xmm t = vec(kOperandTemps + i, vector);
    if (p_.scalar_slots[static_cast<size_t>(arg)]) {
      const Xbyak::Address one = ptr[pointer(arg)];
      if (!vector) {
        f64_ ? vmovsd(t, one) : vmovss(t, one);
      } else {
        f64_ ? vbroadcastsd(whole(t.getIdx()), one) : vbroadcastss(whole(t.getIdx()), one);
      }
    } else if (vector) {
      vmovups(t, element(arg));
    } else {
      f64_ ? vmovsd(t, element(arg)) : vmovss(t, element(arg));
    }
    return t;
  }

  // d = a op b; for a multiply-add d holds the addend: d = a * b + d, rounded once. The packed
  // instructions, on xmm registers in the tail: lane 0 is the element's, computed as the scalar
  // instruction computes it, and the other lanes are never stored.
  void arithmetic(RunOp::Kind kind, const Xbyak::Xmm& d, const Xbyak::Xmm& a, const Xbyak::Xmm& b) {
    switch (kind) {
      case RunOp::Kind::kAdd:
        f64_ ? vaddpd(d, a, b) : vaddps(d, a, b);
        return;
      case RunOp::Kind::kSub:
        f64_ ? vsubpd(d, a, b) : vsubps(d, a, b);
        return;
      case RunOp::Kind::kMul:
        f64_ ? vmulpd(d, a, b) : vmulps(d, a, b);
        return;
      case RunOp::Kind::kDiv:
        f64_ ? vdivpd(d, a, b) : vdivps(d, a, b);
        return;
      case RunOp::Kind::kMultiplyAdd:
        f64_ ? vfmadd231pd(d, a, b) : vfmadd231ps(d, a, b);
        return;
      default:
        return;
    }
  }

  // d = jnp.maximum (or minimum) of a and b, as mask_ops.h's max_min_packet: a where a is NaN,
  // else b where b is, else for two zeros a + b (-(-a - b) for the minimum), else the max (min)
  // instruction's result. Packed instructions on the tail's low lane too. Uses ymm11 and ymm14,
  // which hold neither operand (b is read into ymm13 at most).
  void extreme(bool maximum, const Xbyak::Xmm& d, const Xbyak::Xmm& a, const Xbyak::Xmm& b,
               bool vector) {
    if (vector && wide_) {
      wide_extreme(maximum, d, a, b);
      return;
    }
    const Xbyak::Xmm m = vec(kScratch, vector);
    const Xbyak::Xmm k = vec(kOperandTemps + 2, vector);
    const Xbyak::Xmm sign = vec(kSignMask, vector);
    if (f64_) {
      maximum ? vmaxpd(m, a, b) : vminpd(m, a, b);
    } else {
      maximum ? vmaxps(m, a, b) : vminps(m, a, b);
    }
    vxorps(k, k, k);
    vxorps(d, d, d);
    if (f64_) {
      vcmpeqpd(k, a, k);
      vcmpeqpd(d, b, d);
    } else {
      vcmpeqps(k, a, k);
      vcmpeqps(d, b, d);
    }
    vandps(k, k, d);  // both zero
    if (maximum) {
      f64_ ? vaddpd(d, a, b) : vaddps(d, a, b);
    } else {
      vxorps(d, a, sign);
      f64_ ? vsubpd(d, d, b) : vsubps(d, d, b);
      vxorps(d, d, sign);
    }
    if (f64_) {
      vblendvpd(m, m, d, k);
      vcmpunordpd(k, b, b);
      vblendvpd(m, m, b, k);
      vcmpunordpd(k, a, a);
      vblendvpd(d, m, a, k);
    } else {
      vblendvps(m, m, d, k);
      vcmpunordps(k, b, b);
      vblendvps(m, m, b, k);
      vcmpunordps(k, a, a);
      vblendvps(d, m, a, k);
    }
  }

  // extreme() on zmm registers, in the same order, with AVX-512's mask registers k1-k3 in place
  // of AVX's blend masks: m = max(a, b); where a and b are both zero, a + b (or -(-a - b));
  // where b is NaN, b; d = a where a is NaN, else m. zmm14 holds zero.
  void wide_extreme(bool maximum, const Xbyak::Xmm& d, const Xbyak::Xmm& a, const Xbyak::Xmm& b) {
    const Xbyak::Zmm m(kScratch);
    const Xbyak::Zmm zero(kOperandTemps + 2);
    const Xbyak::Zmm sign(kSignMask);
    const Xbyak::Opmask zeros(1);
    const Xbyak::Opmask b_nan(2);
    const Xbyak::Opmask a_nan(3);
    constexpr uint8_t kEqual = 0;      // _CMP_EQ_OQ, as vcmpeqps
    constexpr uint8_t kUnordered = 3;  // _CMP_UNORD_Q, as vcmpunordps
    if (f64_) {
      maximum ? vmaxpd(m, a, b) : vminpd(m, a, b);
    } else {
      maximum ? vmaxps(m, a, b) : vminps(m, a, b);
    }
    vpxord(zero, zero, zero);
    f64_ ? vcmppd(zeros, a, zero, kEqual) : vcmpps(zeros, a, zero, kEqual);
    f64_ ? vcmppd(zeros | zeros, b, zero, kEqual) : vcmpps(zeros | zeros, b, zero, kEqual);
    if (maximum) {
      f64_ ? vaddpd(d, a, b) : vaddps(d, a, b);
    } else {
      vpxord(d, a, sign);
      f64_ ? vsubpd(d, d, b) : vsubps(d, d, b);
      vpxord(d, d, sign);
    }
    f64_ ? vblendmpd(m | zeros, m, d) : vblendmps(m | zeros, m, d);
    f64_ ? vcmppd(b_nan, b, b, kUnordered) : vcmpps(b_nan, b, b, kUnordered);
    f64_ ? vblendmpd(m | b_nan, m, b) : vblendmps(m | b_nan, m, b);
    f64_ ? vcmppd(a_nan, a, a, kUnordered) : vcmpps(a_nan, a, a, kUnordered);
    f64_ ? vblendmpd(d | a_nan, m, a) : vblendmps(d | a_nan, m, a);
  }

  // Every op on one vector (or one element), in order; values stored where the run's outputs are.
  void body(bool vector) {
    const Xbyak::Xmm sign = vec(kSignMask, vector);
    for (size_t k = 0; k < p_.ops.size(); ++k) {
      const RunOp& op = p_.ops[k];
      const Xbyak::Xmm d = vec(reg_[k], vector);
      const Xbyak::Xmm a = operand(op, 0, vector);
      switch (op.kind) {
        case RunOp::Kind::kNeg:
          bit_xor(d, a, sign);
          break;
        case RunOp::Kind::kAbs:
          bit_and_not(d, sign, a);
          break;
        case RunOp::Kind::kSqrt:
          f64_ ? vsqrtpd(d, a) : vsqrtps(d, a);
          break;
        case RunOp::Kind::kMax:
        case RunOp::Kind::kMin:
          extreme(op.kind == RunOp::Kind::kMax, d, a, operand(op, 1, vector), vector);
          break;
        case RunOp::Kind::kMultiplyAdd: {
          Xbyak::Xmm x = a;
          Xbyak::Xmm c = operand(op, 2, vector);
          if ((op.signs & 1) != 0) {  // the product's sign (chain.h: kNegateProduct)
            x = vec(kOperandTemps, vector);
            bit_xor(x, a, sign);
          }
          if ((op.signs & 2) != 0) {  // the addend's (kNegateAddend)
            bit_xor(vec(kOperandTemps + 2, vector), c, sign);
            c = vec(kOperandTemps + 2, vector);
          }
          const Xbyak::Xmm b = operand(op, 1, vector);
          vmovaps(d, c);
          arithmetic(op.kind, d, x, b);
          break;
        }
        default:
          arithmetic(op.kind, d, a, operand(op, 1, vector));
          break;
      }
      if (op.store >= 0) {
        const int at = static_cast<int>(p_.scalar_slots.size()) + op.store;
        if (vector) {
          vmovups(element(at), d);
        } else {
          f64_ ? vmovsd(element(at), d) : vmovss(element(at), d);
        }
      }
    }
  }

  const RunProgram p_;
  const std::vector<int> reg_;
  const bool f64_;
  const bool wide_;  // AVX-512's zmm loop
  const int size_;
};

// A program's bytes: equal programs, equal keys.
std::string key_of(const RunProgram& p, RunVectors vectors) {
  std::string key;
  key.push_back(static_cast<char>(vectors));
  key.push_back(static_cast<char>(p.dtype));
  key.push_back(static_cast<char>(p.outputs));
  for (bool s : p.scalar_slots) key.push_back(s ? 's' : 'v');
  for (const RunOp& op : p.ops) {
    key.push_back(static_cast<char>(op.kind));
    key.push_back(static_cast<char>(op.signs));
    for (int16_t a : op.args) key.append(reinterpret_cast<const char*>(&a), sizeof a);
    key.append(reinterpret_cast<const char*>(&op.store), sizeof op.store);
  }
  return key;
}

// The cached programs: a chain holding one keeps its code mapped (CompiledRun) after the cache
// drops it.
struct Compiled {
  std::mutex mu;
  std::unordered_map<std::string, CompiledRun> codes;
  std::deque<std::string> order;  // the keys, compiled first first
  bool broken = false;            // mapping executable memory failed once: compile no more
};

Compiled& compiled() {
  static auto* c = new Compiled;
  return *c;
}

std::atomic<int64_t> compiled_count{0};

}  // namespace

CompiledRun compile_run(const RunProgram& p) { return compile_run(p, register_run_vectors()); }

CompiledRun compile_run(const RunProgram& p, RunVectors vectors) {
  if (!register_run_vectors_supported(vectors)) return {};
  if (p.dtype != DType::kFloat32 && p.dtype != DType::kFloat64) return {};
  const Allocation reg = allocate(p);
  if (reg.empty()) return {};
  std::string key = key_of(p, vectors);
  Compiled& c = compiled();
  const std::lock_guard<std::mutex> lock(c.mu);
  if (auto it = c.codes.find(key); it != c.codes.end()) return it->second;
  if (c.broken) return {};
  try {
    auto code = std::make_shared<RunCode>(p, reg, vectors);
    CompiledRun run{code, code->function()};
    if (c.codes.size() >= kMaxRunPrograms) {
      c.codes.erase(c.order.front());
      c.order.pop_front();
    }
    c.codes.emplace(key, run);
    c.order.push_back(std::move(key));
    compiled_count.fetch_add(1, std::memory_order_relaxed);
    return run;
  } catch (const Xbyak::Error& e) {
    // Mapping or protecting executable memory failed: it will fail again. Another error (code
    // larger than its buffer, say) is this program's alone, which runs step by step.
    if (int{e} == Xbyak::ERR_CANT_PROTECT || int{e} == Xbyak::ERR_CANT_ALLOC) c.broken = true;
  } catch (const std::bad_alloc&) {
    c.broken = true;
  }
  return {};
}

#else

CompiledRun compile_run(const RunProgram&) { return {}; }
CompiledRun compile_run(const RunProgram&, RunVectors) { return {}; }

namespace {
std::atomic<int64_t> compiled_count{0};
}  // namespace

#endif

int64_t register_runs_compiled() { return compiled_count.load(std::memory_order_relaxed); }

}  // namespace spmd::kernels
