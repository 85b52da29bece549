#!/usr/bin/env bash
# Invokes every function with every sample that is its input, offline, against the embedded
# sandbox (`--stage local`, infra/local/invoke-sandbox.ts). Fails on the first error or rejection.
#   infra/local/invoke-all.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

invoke() {
  local fn=$1 sample=$2 out
  printf '%-15s %-45s ' "$fn" "$sample"
  if ! out=$(npx serverless invoke local --stage local -f "$fn" -p "events/$sample" 2>&1); then
    echo FAILED; echo "$out" >&2; exit 1
  fi
  if grep -q '"errorMessage"\|"status": "rejected"' <<<"$out"; then
    echo REJECTED; echo "$out" >&2; exit 1
  fi
  echo ok
}

invoke github-webhook github-webhook-workflow-job-queued.json
for sample in k8s-pod-evicted.json k8s-node-not-ready.json ec2-spot-interruption-warning.json \
  ec2-instance-terminated.json github-job-queued-observation.json; do
  invoke remediate "$sample"
done
invoke reconcile reconcile-schedule.json
