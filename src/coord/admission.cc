#include "coord/admission.h"

#include "coord/service_context.h"

namespace spmd {

std::vector<Admission::SessionPtr> Admission::admit(const SessionPtr& session,
                                                    size_t unregistered) {
  session->arrival = next_arrival_++;
  strangers_.emplace(session->arrival, session);
  std::vector<SessionPtr> dropped;
  const size_t room = unregistered + kSpareStrangers;
  while (strangers_.size() > room) {
    auto oldest = strangers_.begin();
    SessionPtr s = oldest->second.lock();
    strangers_.erase(oldest);
    if (!s) continue;
    s->arrival = 0;
    dropped.push_back(std::move(s));
  }
  return dropped;
}

void Admission::leave_strangers(ServiceSession& session) {
  if (session.arrival == 0) return;
  strangers_.erase(session.arrival);
  session.arrival = 0;
}

void Admission::registered(ServiceSession& session) { leave_strangers(session); }

bool Admission::became_tool(ServiceSession& session) {
  if (session.tool) return true;
  if (tools_ >= kMaxTools) return false;
  leave_strangers(session);
  session.tool = true;
  ++tools_;
  return true;
}

void Admission::closed(ServiceSession& session) {
  leave_strangers(session);
  if (session.tool) {
    session.tool = false;
    --tools_;
  }
}

}  // namespace spmd
