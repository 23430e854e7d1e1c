// Kubernetes: the pods of an indexed Job (completionMode: Indexed), one process per pod, with a
// headless Service named as the pods' subdomain so that they reach each other by name.
//
// Present when JOB_COMPLETION_INDEX (which Kubernetes sets in an indexed Job's pods) and
// KUBERNETES_SERVICE_HOST are set. Process id: JOB_COMPLETION_INDEX. Local id: 0. Processes: the
// Job's spec.completions, read from the API server with the pod's service account (which must be
// allowed to get jobs: examples/k8s/ has the Role): Kubernetes puts the count in no variable. The
// Job's name: the pod's hostname, which an indexed Job sets to <job>-<index>. Coordinator: pod 0,
// <job>-0.<the pods' subdomain and domain>, the latter read from this pod's own name in
// /etc/hosts (Kubernetes writes <ip> <hostname>.<subdomain>.<namespace>.svc.<cluster domain>
// <hostname> there when the pod has a subdomain); port from the Job's name
// (coordinator_port_for_job), or SPMD_COORDINATOR_PORT.
//
// The pod's files are read under SPMD_K8S_ROOT when it is set (default "/"): the service
// account's token, ca.crt and namespace in var/run/secrets/kubernetes.io/serviceaccount/, and
// etc/hosts. Tests point it at files of their own.
#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cluster/cluster_env.h"
#include "cluster/k8s_api.h"
#include "spmd/error.h"

namespace spmd {
namespace {

constexpr const char* kAccount = "var/run/secrets/kubernetes.io/serviceaccount/";
// How long reading the Job may take: the API server answers in milliseconds when reachable.
constexpr std::chrono::seconds kApiTimeout{30};

std::string read_text(const std::string& path, const std::string& what) {
  std::ifstream in(path);
  if (!in) {
    throw InvalidArgument(
        fmt::format("Kubernetes: cannot read {} ({}): is the pod's service account token mounted "
                    "(automountServiceAccountToken)?",
                    path, what));
  }
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

uint64_t fnv1a(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

class K8sEnv : public ClusterEnv {
 public:
  explicit K8sEnv(EnvReader env) : env_(std::move(env)) {}

  std::string name() const override { return "k8s"; }
  std::vector<std::string> marker_variables() const override {
    return {"JOB_COMPLETION_INDEX", "KUBERNETES_SERVICE_HOST"};
  }
  bool is_present() const override {
    return env_.has("JOB_COMPLETION_INDEX") && env_.has("KUBERNETES_SERVICE_HOST");
  }

  std::optional<std::string> coordinator_address(std::chrono::milliseconds) const override {
    const std::string job = job_name();
    const std::string domain = pod_domain();
    return fmt::format("{}-0.{}:{}", job, domain, coordinator_port_for_job(fnv1a(job), env_));
  }
  std::optional<int> num_processes() const override {
    const std::string job = job_name();
    const std::string ns = read_text(root() + kAccount + "namespace", "the pod's namespace");
    const K8sApiServer server{
        *env_.get("KUBERNETES_SERVICE_HOST"), env_.get("KUBERNETES_SERVICE_PORT").value_or("443"),
        read_text(root() + kAccount + "token", "its token"), root() + kAccount + "ca.crt"};
    const std::string body =
        k8s_get(server, fmt::format("/apis/batch/v1/namespaces/{}/jobs/{}", ns, job), kApiTimeout);
    const auto doc = nlohmann::json::parse(body, nullptr, false);
    const auto* completions = doc.is_object() && doc.contains("spec") && doc["spec"].is_object() &&
                                      doc["spec"].contains("completions")
                                  ? &doc["spec"]["completions"]
                                  : nullptr;
    if (completions == nullptr || !completions->is_number_integer() ||
        completions->get<int64_t>() < 1 || completions->get<int64_t>() > kMaxInt) {
      throw InvalidArgument(fmt::format(
          "Kubernetes: Job {} in namespace {} has no spec.completions the process count can "
          "come from; give it completions (and completionMode: Indexed)",
          job, ns));
    }
    const int n = completions->get<int>();
    if (*process_id() >= n) {
      throw InvalidArgument(
          fmt::format("Kubernetes: JOB_COMPLETION_INDEX={} but Job {} has {} "
                      "completions",
                      *process_id(), job, n));
    }
    return n;
  }
  std::optional<int> process_id() const override {
    return env_.require_int("JOB_COMPLETION_INDEX", 0, kMaxInt, "Kubernetes");
  }
  std::optional<int> local_process_id() const override { return 0; }

 private:
  std::string root() const {
    std::string r = env_.get("SPMD_K8S_ROOT").value_or("/");
    if (r.empty() || r.back() != '/') r += '/';
    return r;
  }
  // The pod's hostname, as Kubernetes sets it for an indexed Job's pod: <job>-<index>.
  std::string hostname() const {
    const auto host = env_.get("HOSTNAME");
    if (!host || host->empty()) {
      throw InvalidArgument("Kubernetes: HOSTNAME is not set (Kubernetes sets it in every pod)");
    }
    return *host;
  }
  std::string job_name() const {
    const std::string host = hostname();
    const std::string suffix = "-" + std::to_string(*process_id());
    if (host.size() <= suffix.size() ||
        host.compare(host.size() - suffix.size(), suffix.size(), suffix) != 0) {
      throw InvalidArgument(fmt::format(
          "Kubernetes: the pod's hostname '{}' is not <job>-{} as an indexed Job names its pods "
          "(is the Job's completionMode Indexed, and the pod's hostname left to it?)",
          host, *process_id()));
    }
    return host.substr(0, host.size() - suffix.size());
  }
  // What follows this pod's hostname in its full name in /etc/hosts: "<subdomain>.<namespace>.
  // svc.<cluster domain>", which pod 0's name shares.
  std::string pod_domain() const {
    const std::string host = hostname();
    std::ifstream hosts(root() + "etc/hosts");
    std::string line;
    while (std::getline(hosts, line)) {
      std::istringstream words(line);
      std::string word;
      words >> word;  // the address
      while (words >> word) {
        if (word.size() > host.size() + 1 && word.compare(0, host.size() + 1, host + ".") == 0) {
          return word.substr(host.size() + 1);
        }
      }
    }
    throw InvalidArgument(fmt::format(
        "Kubernetes: this pod ({}) has no subdomain, so its peers cannot reach pod 0 by name. "
        "Give the Job's pods a headless Service (clusterIP: None, publishNotReadyAddresses: true, "
        "selector job-name: <job>) and name it in the pod template: spec.template.spec.subdomain "
        "(examples/k8s/ has both)",
        host));
  }

  EnvReader env_;
};

}  // namespace

std::unique_ptr<ClusterEnv> make_k8s_env(EnvReader env) {
  return std::make_unique<K8sEnv>(std::move(env));
}

}  // namespace spmd
