# syntax=docker/dockerfile:1
# The image of `runner-medic serve` in the cluster it rescues (infra/kubernetes/in-cluster/,
# docs/in-cluster.md):
#   docker build -t <registry>/runner-medic:0.1.0 .
# - build: the CLI (functions/cli/entry.ts) bundled by esbuild into one ES module, npm packages
#   left outside it;
# - deps: the production packages only;
# - runtime: the bundle where entry.ts was (files the CLI reads beside its source, such as
#   infra/github-app/, resolve as in the repository), the packages, and nothing to write to. It runs
#   as uid 1000, not root, and writes only to the store volume (SQLITE_PATH, /data) and /tmp, both
#   mounted by deployment.yaml, so the container's root filesystem can be read-only.
# test/infra/container-entrypoint.test.ts runs the build command below and this entrypoint as a
# process, with the Deployment's environment, and checks what it states against the manifests.

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# No install scripts: the `node` dev dependency would download a second Node 24, and esbuild's
# JavaScript launcher finds its platform binary without them. esbuild runs from node_modules/.bin,
# not through npx, which would put that dependency's uninstalled `node` first on the PATH.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY functions ./functions

RUN node_modules/.bin/esbuild functions/cli/entry.ts --bundle --platform=node --format=esm --target=node24 --packages=external --log-level=warning --outfile=build/entry.mjs

FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY infra/github-app/manifest-org.json infra/github-app/manifest-repo.json ./infra/github-app/
COPY --from=build /app/build/entry.mjs ./functions/cli/entry.mjs
# The node image's `node` user, by number, so that runAsNonRoot can verify it.
USER 1000:1000
# The webhook (PORT) and the probes and metrics (PROBE_PORT).
EXPOSE 8080 9090
ENTRYPOINT ["node", "/app/functions/cli/entry.mjs"]
CMD ["serve"]
