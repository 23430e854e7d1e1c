// Reading one object from the Kubernetes API server, as a pod reads it from inside its cluster:
// HTTPS to the API server's address, its certificate checked against the service account's CA
// (and its name or IP against the address), the service account's token as the bearer. One GET
// as HTTP/1.0 (so the body is never chunked), within a deadline; the answer read up to 4 MiB.
// Thread-safe: each call has its own connection and event loop.
#pragma once

#include <chrono>
#include <string>

namespace spmd {

struct K8sApiServer {
  std::string host;     // KUBERNETES_SERVICE_HOST: an IP address (v4 or v6) or a name
  std::string port;     // KUBERNETES_SERVICE_PORT
  std::string token;    // the service account's bearer token
  std::string ca_file;  // the service account's ca.crt
};

// The body of GET `path` ("/apis/batch/v1/namespaces/ns/jobs/name"). Throws DeadlineExceeded
// when no answer comes within `timeout`, PermissionDenied for 401 and 403 (naming what the pod's
// service account must be allowed), spmd::Error naming the URL for a refused or unverifiable
// connection, any other status, or an answer past 4 MiB.
std::string k8s_get(const K8sApiServer& server, const std::string& path,
                    std::chrono::milliseconds timeout);

}  // namespace spmd
