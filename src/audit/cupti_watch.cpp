// Note [audit tampering] (cupti_watch.hpp): the executable's own definitions of the CUPTI entry
// points that switch the audit off; each notes the call and forwards to libcupti.
#include "audit/cupti_watch.hpp"

#include <cupti.h>
#include <dlfcn.h>

#include <algorithm>
#include <mutex>
#include <string>
#include <utility>

namespace aisp {
namespace {

thread_local int own_calls = 0;
std::mutex tampering_mutex;
std::vector<std::string> tampering;

void note(std::string what) {
  if (own_calls > 0) return;
  std::lock_guard lock(tampering_mutex);
  if (std::find(tampering.begin(), tampering.end(), what) == tampering.end()) tampering.push_back(std::move(what));
}

template <class Fn>
Fn real(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

}  // namespace

audit_own_calls::audit_own_calls() { ++own_calls; }
audit_own_calls::~audit_own_calls() { --own_calls; }

std::vector<std::string> take_audit_tampering() {
  std::lock_guard lock(tampering_mutex);
  return std::exchange(tampering, {});
}

}  // namespace aisp

// A missing libcupti forwards to nothing: the call reports CUPTI_ERROR_NOT_INITIALIZED.
#define AISP_FORWARD(name, signature, ...)                                  \
  static const auto forward = aisp::real<CUptiResult(*) signature>(#name);  \
  return forward != nullptr ? forward(__VA_ARGS__) : CUPTI_ERROR_NOT_INITIALIZED

extern "C" CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind) {
  aisp::note("cuptiActivityDisable(kind " + std::to_string(static_cast<int>(kind)) + ")");
  AISP_FORWARD(cuptiActivityDisable, (CUpti_ActivityKind), kind);
}

extern "C" CUptiResult cuptiActivityDisableContext(CUcontext context, CUpti_ActivityKind kind) {
  aisp::note("cuptiActivityDisableContext(kind " + std::to_string(static_cast<int>(kind)) + ")");
  AISP_FORWARD(cuptiActivityDisableContext, (CUcontext, CUpti_ActivityKind), context, kind);
}

extern "C" CUptiResult cuptiFinalize() {
  aisp::note("cuptiFinalize");
  AISP_FORWARD(cuptiFinalize, ());
}

extern "C" CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle subscriber) {
  aisp::note("cuptiUnsubscribe");
  AISP_FORWARD(cuptiUnsubscribe, (CUpti_SubscriberHandle), subscriber);
}

extern "C" CUptiResult cuptiSubscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback, void* userdata) {
  aisp::note("cuptiSubscribe");
  AISP_FORWARD(cuptiSubscribe, (CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*), subscriber, callback, userdata);
}

extern "C" CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                                                      CUpti_BuffersCallbackCompleteFunc completed) {
  aisp::note("cuptiActivityRegisterCallbacks");
  AISP_FORWARD(cuptiActivityRegisterCallbacks, (CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc),
               requested, completed);
}

extern "C" CUptiResult cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle subscriber, CUpti_CallbackDomain domain) {
  if (enable == 0) aisp::note("cuptiEnableDomain(0)");
  AISP_FORWARD(cuptiEnableDomain, (uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain), enable, subscriber, domain);
}

extern "C" CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber, CUpti_CallbackDomain domain,
                                           CUpti_CallbackId callback) {
  if (enable == 0) aisp::note("cuptiEnableCallback(0)");
  AISP_FORWARD(cuptiEnableCallback, (uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId), enable,
               subscriber, domain, callback);
}

extern "C" CUptiResult cuptiEnableAllDomains(uint32_t enable, CUpti_SubscriberHandle subscriber) {
  if (enable == 0) aisp::note("cuptiEnableAllDomains(0)");
  AISP_FORWARD(cuptiEnableAllDomains, (uint32_t, CUpti_SubscriberHandle), enable, subscriber);
}
