// The emulated `npu` device of `ascend-port emulate`: PyTorch's PrivateUse1 backend, renamed npu, over host memory.
// Plain C++, read as text by ascend_port/emulate/_native.py (its SOURCE) and compiled once per torch version and
// text of this file by ascend_port/emulate/device.py with torch.utils.cpp_extension.load_inline (FUNCTIONS in
// _native.py names the functions it binds).

#include <torch/extension.h>
#include <torch/library.h>
#include <ATen/EmptyTensor.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/autocast_mode.h>
#include <c10/core/InferenceMode.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <unordered_map>
#include <vector>
#include <memory>
#include <cstring>
#include <atomic>
#include <mutex>
#include <optional>
#include <unordered_set>
#include <thread>
#include <string>
#include <tuple>

namespace {

constexpr c10::DeviceType kNpu = c10::DeviceType::PrivateUse1;
c10::DeviceIndex g_device_count = 1;
thread_local c10::DeviceIndex g_current = 0;

void check_index(c10::DeviceIndex idx) {
  TORCH_CHECK(idx >= 0 && idx < g_device_count, "Invalid device npu:", static_cast<int>(idx),
              ": the emulator has ", static_cast<int>(g_device_count),
              " npu device(s) (ascend-port emulate --devices N)");
}

// Memory statistics per device: the bytes of npu storages alive (allocated here, or CPU results wrapped as npu
// tensors by the fallback), so torch.npu.memory_allocated() and its peak say what the program holds on the npu.
constexpr int kMaxDevices = 64;
std::atomic<int64_t> g_allocated[kMaxDevices];
std::atomic<int64_t> g_peak[kMaxDevices];
std::atomic<int64_t> g_alloc_count[kMaxDevices];
std::atomic<int64_t> g_free_count[kMaxDevices];

void count_alloc(c10::DeviceIndex idx, int64_t bytes) {
  int64_t now = g_allocated[idx].fetch_add(bytes) + bytes;
  int64_t peak = g_peak[idx].load();
  while (now > peak && !g_peak[idx].compare_exchange_weak(peak, now)) {}
  g_alloc_count[idx].fetch_add(1);
}

// What an npu DataPtr owns: the memory itself (a CPU DataPtr) or a reference to the CPU storage it wraps.
struct Counted {
  c10::DataPtr memory;
  std::optional<c10::Storage> storage;
  int64_t bytes;
  c10::DeviceIndex device;
};

void delete_counted(void* ctx) {
  auto* counted = static_cast<Counted*>(ctx);
  g_allocated[counted->device].fetch_sub(counted->bytes);
  g_free_count[counted->device].fetch_add(1);
  delete counted;
}

c10::DataPtr counted_ptr(void* data, Counted* counted) {
  count_alloc(counted->device, counted->bytes);
  return c10::DataPtr(data, counted, &delete_counted, c10::Device(kNpu, counted->device));
}

struct NpuAllocator final : c10::Allocator {
  c10::DataPtr allocate(size_t n) override {
    c10::DataPtr memory = c10::GetCPUAllocator()->allocate(n);
    void* data = memory.get();
    return counted_ptr(data, new Counted{std::move(memory), std::nullopt, static_cast<int64_t>(n), g_current});
  }
  c10::DeleterFnPtr raw_deleter() const override { return nullptr; }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }
};
NpuAllocator g_alloc;

// Pinned host memory is host memory; the set of pinned pointers answers Tensor.is_pinned().
std::mutex g_pinned_mutex;
std::unordered_set<const void*> g_pinned;

void delete_pinned(void* ctx) {
  auto* memory = static_cast<c10::DataPtr*>(ctx);
  {
    std::lock_guard<std::mutex> lock(g_pinned_mutex);
    g_pinned.erase(memory->get());
  }
  delete memory;
}

struct PinnedAllocator final : c10::Allocator {
  c10::DataPtr allocate(size_t n) override {
    auto* memory = new c10::DataPtr(c10::GetCPUAllocator()->allocate(n));
    void* data = memory->get();
    {
      std::lock_guard<std::mutex> lock(g_pinned_mutex);
      g_pinned.insert(data);
    }
    return c10::DataPtr(data, memory, &delete_pinned, c10::Device(c10::kCPU));
  }
  c10::DeleterFnPtr raw_deleter() const override { return nullptr; }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }
};
PinnedAllocator g_pinned_alloc;

// torch.Generator(device="npu"): a CPU generator that says npu. The fallback lends it to CPU kernels as a CPU
// generator for the length of the call (CPU kernels check their generator's device type), so its state is the one
// the kernels draw from.
struct NpuGeneratorImpl final : at::CPUGeneratorImpl {
  explicit NpuGeneratorImpl(c10::DeviceIndex idx) : at::CPUGeneratorImpl(c10::default_rng_seed_val) {
    as_npu(idx);
  }
  void as_npu(c10::DeviceIndex idx) {
    device_ = c10::Device(kNpu, idx);
    key_set_ = c10::DispatchKeySet(c10::DispatchKey::PrivateUse1);
  }
  void as_cpu() {
    device_ = c10::Device(c10::kCPU);
    key_set_ = c10::DispatchKeySet(c10::DispatchKey::CPU);
  }
};

struct CurrentDeviceSwap {
  c10::DeviceIndex saved;
  explicit CurrentDeviceSwap(c10::DeviceIndex idx) : saved(g_current) { check_index(idx); g_current = idx; }
  ~CurrentDeviceSwap() { g_current = saved; }
};

c10::DeviceIndex index_of(std::optional<c10::Device> device) {
  return (device.has_value() && device->has_index()) ? device->index() : g_current;
}

// The threads that have set an npu device: autograd's device threads do it once their Python thread state is made
// (see device.py's _start_autograd_threads).
std::atomic<int64_t> g_threads_seen{0};
thread_local bool t_seen = false;
std::thread::id g_main_thread;

void seen() {
  if (!t_seen && std::this_thread::get_id() != g_main_thread) { t_seen = true; g_threads_seen.fetch_add(1); }
}

struct NpuGuardImpl final : c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override { return kNpu; }
  c10::Device exchangeDevice(c10::Device d) const override {
    auto old = getDevice();
    setDevice(d);
    return old;
  }
  c10::Device getDevice() const override { return c10::Device(kNpu, g_current); }
  void setDevice(c10::Device d) const override {
    seen();
    if (d.has_index()) { check_index(d.index()); g_current = d.index(); }
  }
  void uncheckedSetDevice(c10::Device d) const noexcept override {
    if (d.has_index()) g_current = d.index();
  }
  c10::Stream getStream(c10::Device d) const override { return c10::Stream(c10::Stream::DEFAULT, d); }
  c10::Stream getDefaultStream(c10::Device d) const override { return c10::Stream(c10::Stream::DEFAULT, d); }
  c10::Stream getNewStream(c10::Device d, int) const override { return c10::Stream(c10::Stream::DEFAULT, d); }
  c10::Stream getStreamFromGlobalPool(c10::Device d, bool) const override {
    return c10::Stream(c10::Stream::DEFAULT, d);
  }
  c10::Stream exchangeStream(c10::Stream s) const override { return c10::Stream(c10::Stream::DEFAULT, s.device()); }
  c10::DeviceIndex deviceCount() const noexcept override { return g_device_count; }
  void destroyEvent(void*, const c10::DeviceIndex) const noexcept override {}
  void record(void**, const c10::Stream&, const c10::DeviceIndex, const c10::EventFlag) const override {}
  void block(void*, const c10::Stream&) const override {}
  bool queryEvent(void*) const override { return true; }
  bool queryStream(const c10::Stream&) const override { return true; }
  void synchronizeStream(const c10::Stream&) const override {}
  void synchronizeEvent(void*) const override {}
  void synchronizeDevice(const c10::DeviceIndex) const override {}
  void recordDataPtrOnStream(const c10::DataPtr&, const c10::Stream&) const override {}
  double elapsedTime(void*, void*, const c10::DeviceIndex) const override { return 0.0; }
};
C10_REGISTER_GUARD_IMPL(PrivateUse1, NpuGuardImpl);

struct NpuHooks final : at::PrivateUse1HooksInterface {
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return true; }
  bool hasPrimaryContext(c10::DeviceIndex) const override { return true; }
  void init() const override {}
  c10::DeviceIndex deviceCount() const override { return g_device_count; }
  void setCurrentDevice(c10::DeviceIndex d) const override { check_index(d); g_current = d; }
  c10::DeviceIndex getCurrentDevice() const override { return g_current; }
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex d) const override {
    auto old = g_current; check_index(d); g_current = d; return old;
  }
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex d) const override { return exchangeDevice(d); }
  bool isPinnedPtr(const void* data) const override {
    std::lock_guard<std::mutex> lock(g_pinned_mutex);
    return g_pinned.count(data) > 0;
  }
  c10::Allocator* getPinnedMemoryAllocator() const override { return &g_pinned_alloc; }
  at::Generator getNewGenerator(c10::DeviceIndex idx) const override {
    return at::make_generator<NpuGeneratorImpl>(idx < 0 ? g_current : idx);
  }
  c10::Device getDeviceFromPtr(void*) const override { return c10::Device(kNpu, g_current); }
  const at::Generator& getDefaultGenerator(c10::DeviceIndex) const override {
    return at::detail::getDefaultCPUGenerator();
  }
  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t newsize) const override {
    auto* impl = storage.unsafeGetStorageImpl();
    c10::DeviceIndex idx = impl->data_ptr().device().index();
    CurrentDeviceSwap swap(idx < 0 ? g_current : idx);
    c10::DataPtr fresh = g_alloc.allocate(newsize);
    size_t keep = std::min(newsize, impl->nbytes());
    if (keep > 0) std::memcpy(fresh.get(), impl->data(), keep);
    impl->set_data_ptr_noswap(std::move(fresh));
    impl->set_nbytes(newsize);
  }
};

void delete_storage_ref(void* ctx) { delete static_cast<c10::Storage*>(ctx); }

// A storage over the memory of `src`, on `device`, that keeps `src` alive.
// On the npu, it counts as allocated memory (a CPU result becoming an npu tensor); on the CPU it is a view.
c10::Storage alias_storage(const c10::Storage& src, c10::Device device, c10::Allocator* allocator) {
  void* ptr = const_cast<void*>(src.data());
  c10::DataPtr dp = device.type() == kNpu
      ? counted_ptr(ptr, new Counted{c10::DataPtr(), src, static_cast<int64_t>(src.nbytes()), device.index()})
      : c10::DataPtr(ptr, new c10::Storage(src), &delete_storage_ref, device);
  return c10::Storage(c10::Storage::use_byte_size_t(), src.nbytes(), std::move(dp), allocator, /*resizable=*/true);
}

at::Tensor tensor_over(c10::Storage storage, c10::DispatchKey key, const at::Tensor& like) {
  // Under torch.inference_mode() a new TensorImpl is an inference tensor; a view of a normal tensor must stay normal
  // (autograd's ADInplaceOrView kernel gives it its base's version counter, which an inference tensor refuses), so
  // the tensor is made normal or inference as `like` (the argument or the CPU kernel's result) is.
  std::optional<c10::InferenceMode> as_like;
  if (c10::InferenceMode::is_enabled() && !like.is_inference()) as_like.emplace(false);
  auto t = at::detail::make_tensor<c10::TensorImpl>(std::move(storage), c10::DispatchKeySet(key), like.dtype());
  t.unsafeGetTensorImpl()->set_sizes_and_strides(like.sizes(), like.strides(), like.storage_offset());
  return t;
}

struct Aliases {
  std::unordered_map<c10::StorageImpl*, c10::Storage> to_cpu;    // npu storage -> its CPU alias
  std::unordered_map<c10::StorageImpl*, c10::Storage> to_npu;    // CPU alias -> the npu storage
  std::unordered_map<c10::StorageImpl*, const void*> alias_data;  // CPU alias -> its memory when made
  std::vector<c10::StorageImpl*> cpu_inputs;                     // storages of CPU tensors among the arguments
  std::vector<NpuGeneratorImpl*> lent;                           // npu generators lent to the CPU kernel

  c10::Storage cpu_storage(const c10::Storage& npu) {
    auto* key = npu.unsafeGetStorageImpl();
    auto it = to_cpu.find(key);
    if (it != to_cpu.end()) return it->second;
    c10::Storage alias = alias_storage(npu, c10::Device(c10::kCPU), c10::GetCPUAllocator());
    to_cpu.emplace(key, alias);
    to_npu.emplace(alias.unsafeGetStorageImpl(), npu);
    alias_data.emplace(alias.unsafeGetStorageImpl(), alias.data());
    return alias;
  }
  at::Tensor cpu(const at::Tensor& t) {
    if (!t.defined()) return t;
    if (t.device().type() != kNpu) {
      if (t.has_storage()) cpu_inputs.push_back(t.storage().unsafeGetStorageImpl());
      return t;
    }
    return tensor_over(cpu_storage(t.storage()), c10::DispatchKey::CPU, t);
  }
  // The npu storage for the memory of a CPU result: the argument it aliases, else a wrapper of the result.
  c10::Storage npu_storage(const c10::Storage& cpu_st, c10::DeviceIndex idx) {
    auto* key = cpu_st.unsafeGetStorageImpl();
    auto it = to_npu.find(key);
    if (it != to_npu.end() && alias_data[key] == cpu_st.data()) return it->second;
    return alias_storage(cpu_st, c10::Device(kNpu, idx), &g_alloc);
  }
  bool is_cpu_input(const at::Tensor& t) {
    if (!t.has_storage()) return false;
    auto* s = t.storage().unsafeGetStorageImpl();
    for (auto* c : cpu_inputs) if (c == s) return true;
    return false;
  }
  at::Tensor npu(const at::Tensor& r, c10::DeviceIndex idx) {
    if (!r.defined() || r.device().type() != c10::kCPU || !r.has_storage() || r.is_sparse() || is_cpu_input(r)) return r;
    if (r.layout() != c10::kStrided) return r;
    return tensor_over(npu_storage(r.storage(), idx), c10::DispatchKey::PrivateUse1, r);
  }
};

c10::IValue to_cpu_ivalue(const c10::IValue& v, Aliases& a, c10::DeviceIndex& idx, bool& found) {
  if (v.isTensor()) {
    const auto& t = v.toTensor();
    if (t.defined() && t.device().type() == kNpu && !found) { idx = t.device().index(); found = true; }
    return a.cpu(t);
  }
  if (v.isTensorList()) {
    c10::List<at::Tensor> out;
    for (const at::Tensor& t : v.toTensorList()) {
      if (t.defined() && t.device().type() == kNpu && !found) { idx = t.device().index(); found = true; }
      out.push_back(a.cpu(t));
    }
    return out;
  }
  if (v.isOptionalTensorList()) {
    c10::List<std::optional<at::Tensor>> out;
    for (std::optional<at::Tensor> t : v.toOptionalTensorList()) {
      if (t.has_value()) out.push_back(std::optional<at::Tensor>(a.cpu(*t)));
      else out.push_back(std::nullopt);
    }
    return out;
  }
  if (v.isDevice()) {
    auto d = v.toDevice();
    if (d.type() == kNpu) {
      if (!found) { idx = d.has_index() ? d.index() : g_current; found = true; }
      return c10::IValue(c10::Device(c10::kCPU));
    }
    return v;
  }
  if (v.isStorage()) {
    auto s = v.toStorage();
    if (s.device_type() == kNpu) return c10::IValue(a.cpu_storage(s));
    return v;
  }
  if (v.isList() && v.toList().elementType()->kind() == c10::TypeKind::ListType) {  // c10d's Tensor[][] outputs
    auto list = v.toList();
    c10::impl::GenericList out(list.elementType());
    out.reserve(list.size());
    for (const c10::IValue& item : list) out.push_back(to_cpu_ivalue(item, a, idx, found));
    return out;
  }
  if (v.isGenerator()) {
    auto* npu_gen = dynamic_cast<NpuGeneratorImpl*>(v.toGenerator().unsafeGetGeneratorImpl());
    if (npu_gen != nullptr) a.lent.push_back(npu_gen);
    return v;
  }
  return v;
}

c10::IValue to_npu_ivalue(const c10::IValue& v, Aliases& a, c10::DeviceIndex idx) {
  if (v.isTensor()) return a.npu(v.toTensor(), idx);
  if (v.isTensorList()) {
    c10::List<at::Tensor> out;
    for (const at::Tensor& t : v.toTensorList()) out.push_back(a.npu(t, idx));
    return out;
  }
  if (v.isList() && v.toList().elementType()->kind() == c10::TypeKind::ListType) {
    auto list = v.toList();
    c10::impl::GenericList out(list.elementType());
    out.reserve(list.size());
    for (const c10::IValue& item : list) out.push_back(to_npu_ivalue(item, a, idx));
    return out;
  }
  return v;
}

// After the call: an npu argument whose CPU alias was resized or re-pointed (resize_, set_, out= resizes) follows.
void sync_back(const at::Tensor& orig, const at::Tensor& alias, Aliases& a, c10::DeviceIndex idx) {
  if (!orig.defined() || orig.device().type() != kNpu || !alias.defined()) return;
  auto* impl = orig.unsafeGetTensorImpl();
  auto* alias_st = alias.storage().unsafeGetStorageImpl();
  auto it = a.to_cpu.find(orig.storage().unsafeGetStorageImpl());
  bool same = it != a.to_cpu.end() && it->second.unsafeGetStorageImpl() == alias_st &&
              a.alias_data[alias_st] == alias.storage().data() && alias.storage().nbytes() == orig.storage().nbytes();
  if (!same) impl->set_storage_keep_dtype(a.npu_storage(alias.storage(), orig.device().index()));
  if (!same || orig.sizes() != alias.sizes() || orig.strides() != alias.strides() ||
      orig.storage_offset() != alias.storage_offset()) {
    impl->set_sizes_and_strides(alias.sizes(), alias.strides(), alias.storage_offset());
  }
}

// Run hazards (what the program's ops would cost on a real NPU), per operator that reaches the fallback: its calls,
// its distinct input-shape signatures (CANN builds a kernel per new shape; at most kMaxShapes kept, so the
// bookkeeping stays bounded) with when each was first seen (a model's fixed shapes are all seen in its first step,
// variable ones keep coming) and its calls on float64 / complex npu tensors of more than one element (a scalar, such
// as GradScaler's float64 reciprocal of its scale, costs nothing). The allocations (empty, empty_strided)
// count float64 / complex tensors created on or moved to the npu. Keyed by the operator's schema (stable for the
// process), named only when read; a thread may pause it (the emulator's own references of torch_npu's fused ops).
constexpr size_t kMaxShapes = 64;
struct OpStats {
  std::string name;
  bool view = false;  // returns a view of an argument: no kernel runs, so no shape is compiled for it
  int64_t calls = 0;
  std::unordered_set<uint64_t> shapes;
  // when each shape was first seen: the op's call (1-based) and the call among all ops recorded
  std::vector<std::pair<int64_t, int64_t>> first_seen;
  std::unordered_map<int, int64_t> wide;  // ScalarType -> calls with an npu tensor of that (float64/complex) type
};
std::mutex g_stats_mutex;
std::unordered_map<const void*, OpStats> g_stats;
int64_t g_stats_calls = 0;  // calls recorded, all ops together (under g_stats_mutex)
thread_local bool g_stats_paused = false;
std::atomic<bool> g_stats_enabled{true};  // all threads (benchmarks/bench_emulate.py --hooks times both)

bool is_wide(at::ScalarType type) { return type == at::kDouble || c10::isComplexType(type); }

void mix(uint64_t& hash, uint64_t value) { hash = (hash ^ value) * 1099511628211ULL; }

void note_tensor(const at::Tensor& t, uint64_t& hash, int& wide) {
  if (!t.defined()) { mix(hash, 1); return; }
  mix(hash, static_cast<uint64_t>(t.dim()) + 2);
  for (auto size : t.sizes()) mix(hash, static_cast<uint64_t>(size));
  if (!wide && t.device().type() == kNpu && is_wide(t.scalar_type()) && t.numel() > 1) {
    wide = static_cast<int>(t.scalar_type());
  }
}

void record_op(const c10::OperatorHandle& op, const torch::jit::Stack& stack, size_t args_begin) {
  if (g_stats_paused || !g_stats_enabled.load(std::memory_order_relaxed)) return;
  uint64_t hash = 14695981039346656037ULL;
  int wide = 0;
  for (size_t i = args_begin; i < stack.size(); ++i) {
    const auto& value = stack[i];
    if (value.isTensor()) {
      note_tensor(value.toTensor(), hash, wide);
    } else if (value.isTensorList()) {
      for (const at::Tensor& t : value.toTensorList()) note_tensor(t, hash, wide);
    } else {
      mix(hash, 3);
    }
  }
  std::lock_guard<std::mutex> lock(g_stats_mutex);
  OpStats& s = g_stats[&op.schema()];
  if (s.name.empty()) {
    const auto& name = op.schema().operator_name();
    s.name = name.overload_name.empty() ? name.name : name.name + "." + name.overload_name;
    for (const auto& ret : op.schema().returns()) {
      if (ret.alias_info() && !ret.alias_info()->isWrite()) s.view = true;
    }
  }
  ++s.calls;
  ++g_stats_calls;
  if (!s.view && s.shapes.size() < kMaxShapes && s.shapes.insert(hash).second) {
    s.first_seen.emplace_back(s.calls, g_stats_calls);
  }
  if (wide) ++s.wide[wide];
}

// An npu allocation of a float64 / complex tensor (created on the npu, or the target of a move to it).
void record_allocation(const char* name, at::ScalarType type, c10::IntArrayRef size) {
  if (g_stats_paused || !g_stats_enabled.load(std::memory_order_relaxed) || !is_wide(type) ||
      c10::multiply_integers(size) <= 1) {
    return;
  }
  std::lock_guard<std::mutex> lock(g_stats_mutex);
  OpStats& s = g_stats[name];
  if (s.name.empty()) s.name = name;
  ++s.calls;
  ++s.wide[static_cast<int>(type)];
}

void npu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const auto& schema = op.schema();
  const size_t nargs = schema.arguments().size();
  const size_t nrets = schema.returns().size();
  auto args_begin = stack->size() - nargs;
  record_op(op, *stack, args_begin);
  std::vector<c10::IValue> originals(stack->begin() + args_begin, stack->end());
  Aliases aliases;
  c10::DeviceIndex idx = g_current;
  bool found = false;
  for (size_t i = 0; i < nargs; ++i) {
    (*stack)[args_begin + i] = to_cpu_ivalue(originals[i], aliases, idx, found);
  }
  std::vector<c10::IValue> cpu_args(stack->begin() + args_begin, stack->end());
  {
    CurrentDeviceSwap swap(idx < 0 ? g_current : idx);
    struct Lend {
      std::vector<std::pair<NpuGeneratorImpl*, c10::DeviceIndex>> gens;
      ~Lend() { for (auto& [gen, device] : gens) gen->as_npu(device); }
    } lend;
    for (auto* gen : aliases.lent) {
      lend.gens.emplace_back(gen, gen->device().index());
      gen->as_cpu();
    }
    op.callBoxed(stack);
  }
  // in-place and out= arguments follow their aliases
  for (size_t i = 0; i < nargs; ++i) {
    const auto* info = schema.arguments()[i].alias_info();
    if (!info || !info->isWrite()) continue;
    if (originals[i].isTensor()) {
      sync_back(originals[i].toTensor(), cpu_args[i].toTensor(), aliases, idx);
    } else if (originals[i].isTensorList()) {
      auto o = originals[i].toTensorList();
      auto c = cpu_args[i].toTensorList();
      for (size_t k = 0; k < o.size(); ++k) sync_back(o[k], c[k], aliases, idx);
    }
  }
  auto rets_begin = stack->size() - nrets;
  for (size_t r = 0; r < nrets; ++r) {
    const auto* info = schema.returns()[r].alias_info();
    c10::IValue& ret = (*stack)[rets_begin + r];
    bool done = false;
    if (info && info->isWrite()) {
      for (size_t i = 0; i < nargs; ++i) {
        const auto* ainfo = schema.arguments()[i].alias_info();
        if (ainfo && ainfo->isWrite() && ainfo->beforeSets() == info->beforeSets()) {
          ret = originals[i];
          done = true;
          break;
        }
      }
    }
    if (!done) ret = to_npu_ivalue(ret, aliases, idx);
  }
}

at::Tensor npu_empty(c10::IntArrayRef size, std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                     std::optional<at::Device> device, std::optional<bool> pin_memory,
                     std::optional<at::MemoryFormat> memory_format) {
  CurrentDeviceSwap swap(index_of(device));
  record_allocation("aten::empty.memory_format", c10::dtype_or_default(dtype), size);
  return at::detail::empty_generic(size, &g_alloc, c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                   c10::dtype_or_default(dtype), memory_format);
}

at::Tensor npu_empty_strided(c10::IntArrayRef size, c10::IntArrayRef stride, std::optional<at::ScalarType> dtype,
                             std::optional<at::Layout> layout, std::optional<at::Device> device,
                             std::optional<bool> pin_memory) {
  CurrentDeviceSwap swap(index_of(device));
  record_allocation("aten::empty_strided", c10::dtype_or_default(dtype), size);
  return at::detail::empty_strided_generic(size, stride, &g_alloc, c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                           c10::dtype_or_default(dtype));
}

at::Tensor cpu_view(const at::Tensor& t) {
  if (t.device().type() != kNpu) return t;
  return tensor_over(alias_storage(t.storage(), c10::Device(c10::kCPU), c10::GetCPUAllocator()),
                     c10::DispatchKey::CPU, t);
}

at::Tensor npu_copy_from(const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  at::Tensor d = cpu_view(dst);
  d.copy_(cpu_view(self));
  return dst;
}

at::Tensor npu_copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  if (dst.sizes() != self.sizes()) dst.resize_(self.sizes());
  return npu_copy_from(self, dst, false);
}

at::Tensor& npu_set_storage(at::Tensor& self, c10::Storage source, int64_t offset, at::IntArrayRef size,
                            at::IntArrayRef stride) {
  TORCH_CHECK(source.device_type() == kNpu, "set_: expected an npu storage, got ", source.device());
  auto* impl = self.unsafeGetTensorImpl();
  impl->set_storage_keep_dtype(std::move(source));
  if (stride.empty()) {
    impl->set_sizes_and_strides(size, c10::contiguous_strides(size), offset);
  } else {
    impl->set_sizes_and_strides(size, stride, offset);
  }
  return self;
}

at::Tensor& npu_set_source_storage(at::Tensor& self, c10::Storage source) {
  int64_t n = static_cast<int64_t>(source.nbytes() / self.dtype().itemsize());
  std::vector<int64_t> size{n};
  return npu_set_storage(self, std::move(source), 0, size, {});
}

// Module.to("npu") keeps shared (tied) Parameters shared only when it can move each one in place
// (`param.data = moved`), which torch allows only between "compatible" tensor types; its list of dense backends
// leaves out PrivateUse1, so without this every module would get its own new Parameter. torch_npu does the same.
bool npu_has_compatible_shallow_copy_type(const at::Tensor& self, const at::Tensor& from) {
  auto dense = [](const at::Tensor& t) {
    auto type = t.device().type();
    return t.layout() == c10::kStrided && !t.is_sparse() && (type == kNpu || type == c10::kCPU) &&
           typeid(*t.unsafeGetTensorImpl()) == typeid(c10::TensorImpl);
  };
  if (dense(self) && dense(from)) return true;
  return self.unsafeGetTensorImpl()->has_compatible_shallow_copy_type(from.key_set());
}

// Convolutions: aten::convolution picks its kernel by device and sends PrivateUse1 to convolution_overrideable.
// The emulator runs convolution itself (and its backward) on the CPU kernels over CPU aliases, as the fallback does
// every op; the overrideable pair (reached from aten::_convolution or called directly) redirect there.
at::Tensor npu_convolution_overrideable(const at::Tensor& input, const at::Tensor& weight,
                                        const std::optional<at::Tensor>& bias, c10::IntArrayRef stride,
                                        c10::IntArrayRef padding, c10::IntArrayRef dilation, bool transposed,
                                        c10::IntArrayRef output_padding, int64_t groups) {
  return at::convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> npu_convolution_backward_overrideable(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& weight, c10::IntArrayRef stride,
    c10::IntArrayRef padding, c10::IntArrayRef dilation, bool transposed, c10::IntArrayRef output_padding,
    int64_t groups, std::array<bool, 3> output_mask) {
  std::vector<int64_t> bias_sizes{transposed ? weight.size(1) * groups : weight.size(0)};
  return at::convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
                                  output_padding, groups, output_mask);
}

// LSTM and GRU cells: ATen's RNNs call the fused cell kernels for every non-CPU device (CUDA has them, the CPU has
// not), so the emulator gives them here, composed of ordinary ops (each one the fallback runs on the CPU), with the
// CUDA kernels' formulas. The workspace is what the matching backward reads.
bool given(const std::optional<at::Tensor>& t) { return t.has_value() && t->defined(); }

std::tuple<at::Tensor, at::Tensor, at::Tensor> npu_fused_lstm_cell(const at::Tensor& input_gates,
                                                                   const at::Tensor& hidden_gates, const at::Tensor& cx,
                                                                   const std::optional<at::Tensor>& input_bias,
                                                                   const std::optional<at::Tensor>& hidden_bias) {
  at::Tensor gates = input_gates + hidden_gates;
  if (given(input_bias)) gates = gates + *input_bias;
  if (given(hidden_bias)) gates = gates + *hidden_bias;
  auto chunks = gates.chunk(4, 1);
  at::Tensor i = chunks[0].sigmoid(), f = chunks[1].sigmoid(), g = chunks[2].tanh(), o = chunks[3].sigmoid();
  at::Tensor cy = f * cx + i * g;
  at::Tensor hy = o * cy.tanh();
  return {hy, cy, at::cat({i, f, g, o}, 1)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> npu_fused_lstm_cell_backward(
    const std::optional<at::Tensor>& grad_hy, const std::optional<at::Tensor>& grad_cy, const at::Tensor& cx,
    const at::Tensor& cy, const at::Tensor& workspace, bool has_bias) {
  auto chunks = workspace.chunk(4, 1);
  const at::Tensor &i = chunks[0], &f = chunks[1], &g = chunks[2], &o = chunks[3];
  at::Tensor tanh_cy = cy.tanh();
  at::Tensor gcx = given(grad_cy) ? grad_cy->clone() : at::zeros_like(cy);
  at::Tensor go = at::zeros_like(cy);
  if (given(grad_hy)) {
    gcx = gcx + *grad_hy * o * (1 - tanh_cy * tanh_cy);
    go = *grad_hy * tanh_cy * o * (1 - o);
  }
  at::Tensor gi = gcx * g * i * (1 - i);
  at::Tensor gf = gcx * cx * f * (1 - f);
  at::Tensor gg = gcx * i * (1 - g * g);
  at::Tensor grad_gates = at::cat({gi, gf, gg, go}, 1);
  at::Tensor grad_bias = has_bias ? grad_gates.sum(0) : at::Tensor();
  return {grad_gates, gcx * f, grad_bias};
}

std::tuple<at::Tensor, at::Tensor> npu_fused_gru_cell(const at::Tensor& input_gates, const at::Tensor& hidden_gates,
                                                      const at::Tensor& hx,
                                                      const std::optional<at::Tensor>& input_bias,
                                                      const std::optional<at::Tensor>& hidden_bias) {
  at::Tensor ig = given(input_bias) ? input_gates + *input_bias : input_gates;
  at::Tensor hg = given(hidden_bias) ? hidden_gates + *hidden_bias : hidden_gates;
  auto ic = ig.chunk(3, 1);
  auto hc = hg.chunk(3, 1);
  at::Tensor r = (ic[0] + hc[0]).sigmoid();
  at::Tensor z = (ic[1] + hc[1]).sigmoid();
  at::Tensor n = (ic[2] + r * hc[2]).tanh();
  at::Tensor hy = n + z * (hx - n);
  return {hy, at::cat({r, z, n, hc[2], hx}, 1)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor> npu_fused_gru_cell_backward(
    const at::Tensor& grad_hy, const at::Tensor& workspace, bool has_bias) {
  auto chunks = workspace.chunk(5, 1);
  const at::Tensor &r = chunks[0], &z = chunks[1], &n = chunks[2], &hn = chunks[3], &hx = chunks[4];
  at::Tensor grad_hx = grad_hy * z;
  at::Tensor gz = grad_hy * (hx - n) * z * (1 - z);
  at::Tensor gn = grad_hy * (1 - z) * (1 - n * n);
  at::Tensor gr = gn * hn * r * (1 - r);
  at::Tensor grad_input_gates = at::cat({gr, gz, gn}, 1);
  at::Tensor grad_hidden_gates = at::cat({gr, gz, gn * r}, 1);
  at::Tensor grad_input_bias = has_bias ? grad_input_gates.sum(0) : at::Tensor();
  at::Tensor grad_hidden_bias = has_bias ? grad_hidden_gates.sum(0) : at::Tensor();
  return {grad_input_gates, grad_hidden_gates, grad_hx, grad_input_bias, grad_hidden_bias};
}

}  // namespace

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&npu_fallback>());
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", npu_empty);
  m.impl("empty_strided", npu_empty_strided);
  m.impl("_copy_from", npu_copy_from);
  m.impl("_copy_from_and_resize", npu_copy_from_and_resize);
  m.impl("set_.source_Storage_storage_offset", npu_set_storage);
  m.impl("set_.source_Storage", npu_set_source_storage);
  m.impl("_has_compatible_shallow_copy_type", npu_has_compatible_shallow_copy_type);
  m.impl("convolution", torch::CppFunction::makeFromBoxedFunction<&npu_fallback>());
  m.impl("convolution_backward", torch::CppFunction::makeFromBoxedFunction<&npu_fallback>());
  m.impl("convolution_overrideable", npu_convolution_overrideable);
  m.impl("convolution_backward_overrideable", npu_convolution_backward_overrideable);
  m.impl("_thnn_fused_lstm_cell", npu_fused_lstm_cell);
  m.impl("_thnn_fused_lstm_cell_backward_impl", npu_fused_lstm_cell_backward);
  m.impl("_thnn_fused_gru_cell", npu_fused_gru_cell);
  m.impl("_thnn_fused_gru_cell_backward", npu_fused_gru_cell_backward);
}

TORCH_LIBRARY_IMPL(aten, AutogradPrivateUse1, m) {
  m.impl("_has_compatible_shallow_copy_type", npu_has_compatible_shallow_copy_type);
}

// torch.autocast("npu"): the CUDA policy lists, as torch registers them for its other devices.
TORCH_LIBRARY_IMPL(_, AutocastPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFallthrough());
}

#ifndef ADD_NS
#define ADD_NS(RAW_OP) at::RAW_OP
#endif
#define _NPU_LOW_PRECISION_FP(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, lower_precision_fp)
#define _NPU_FP32(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32)
#define _NPU_FP32_SET_OPT_DTYPE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32_set_opt_dtype)
#define _NPU_PROMOTE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, promote)

namespace at::autocast {
namespace {
TORCH_LIBRARY_IMPL(aten, AutocastPrivateUse1, m) {
  AT_FORALL_LOWER_PRECISION_FP(_NPU_LOW_PRECISION_FP)
  AT_FORALL_FP32(_NPU_FP32)
  AT_FORALL_FP32_SET_OPT_DTYPE(_NPU_FP32_SET_OPT_DTYPE)
  AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE(KERNEL_DIFFERENT_REDISPATCH_SIGNATURE_PRIVATEUSEONE)
  AT_FORALL_PROMOTE(_NPU_PROMOTE)
}
}  // namespace
}  // namespace at::autocast

void install(int64_t device_count) {
  static bool done = false;
  g_device_count = static_cast<c10::DeviceIndex>(device_count);
  if (done) return;
  done = true;
  g_main_thread = std::this_thread::get_id();
  c10::SetAllocator(kNpu, &g_alloc);
  at::RegisterPrivateUse1HooksInterface(new NpuHooks());
}

// torch.npu.memory_allocated / max_memory_allocated / reset_peak_memory_stats / memory_stats
std::vector<int64_t> memory_stats(int64_t idx) {
  check_index(static_cast<c10::DeviceIndex>(idx));
  return {g_allocated[idx].load(), g_peak[idx].load(), g_alloc_count[idx].load(), g_free_count[idx].load()};
}
void reset_peak_memory(int64_t idx) {
  check_index(static_cast<c10::DeviceIndex>(idx));
  g_peak[idx].store(g_allocated[idx].load());
}

int64_t device_count() { return g_device_count; }
int64_t threads_seen() { return g_threads_seen.load(); }
int64_t current_device() { return g_current; }
void set_device(int64_t idx) { check_index(static_cast<c10::DeviceIndex>(idx)); g_current = static_cast<c10::DeviceIndex>(idx); }

// A CPU tensor over the memory of an npu tensor (no copy).
at::Tensor cpu_alias(const at::Tensor& t) { return cpu_view(t); }

// Operators routed to the fallback at start (device.py says which and why): an IMPL library per namespace.
std::unordered_map<std::string, std::unique_ptr<torch::Library>> g_routed;

void route(std::string ns, std::vector<std::string> names) {
  auto& lib = g_routed[ns];
  if (!lib) {
    lib = std::make_unique<torch::Library>(torch::Library::IMPL, ns, c10::DispatchKey::PrivateUse1, __FILE__,
                                           __LINE__);
  }
  for (const auto& name : names) {
    lib->impl(name.c_str(), torch::CppFunction::makeFromBoxedFunction<&npu_fallback>());
  }
}

// The run hazards recorded so far: (operator, calls, distinct shape signatures (kMaxShapes at most), how many of
// those were first seen in the second half both of its calls and of all the calls recorded, calls by float64 /
// complex dtype name).
using OpRecord = std::tuple<std::string, int64_t, int64_t, int64_t, std::vector<std::pair<std::string, int64_t>>>;
std::vector<OpRecord> op_stats() {
  std::lock_guard<std::mutex> lock(g_stats_mutex);
  std::vector<OpRecord> out;
  for (const auto& [key, s] : g_stats) {
    std::vector<std::pair<std::string, int64_t>> wide;
    for (const auto& [type, count] : s.wide) wide.emplace_back(c10::toString(static_cast<at::ScalarType>(type)), count);
    int64_t late = 0;
    for (const auto& [call, overall] : s.first_seen) late += call * 2 > s.calls && overall * 2 > g_stats_calls;
    out.emplace_back(s.name, s.calls, static_cast<int64_t>(s.shapes.size()), late, std::move(wide));
  }
  return out;
}

// Forget what was recorded (the emulator's own start-up ops are not the program's).
void reset_op_stats() {
  std::lock_guard<std::mutex> lock(g_stats_mutex);
  g_stats.clear();
  g_stats_calls = 0;
}

// Turn the recording off (false) or on for every thread.
void enable_op_stats(bool enabled) { g_stats_enabled.store(enabled); }

// Pause (true) or resume the recording on this thread; returns the previous setting.
bool pause_op_stats(bool paused) {
  bool was = g_stats_paused;
  g_stats_paused = paused;
  return was;
}
