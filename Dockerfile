# The Folder Service API process (see docker-compose.yml for the scaled-out deployment around it).
FROM node:20

WORKDIR /app
ENV NODE_ENV=production

# Dependencies first, so that source edits reuse this layer. The full node:20 image has the compilers
# better-sqlite3 falls back to when no prebuilt binary fits; KurrentDB's native bridge ships in a registry package.
COPY package.json package-lock.json ./
RUN npm ci --include=dev && npm cache clean --force

# Built once here, as root (scripts/build.ts bundles each process entry with esbuild into dist/).
COPY tsconfig.json ./
COPY scripts ./scripts
COPY src ./src
RUN npm run build

# DATA_DIR keeps the process's local state (the embedded SQLite file for progress notifications and chunked
# uploads in progress); events, read models and file bytes live in KurrentDB and MongoDB when configured so.
ENV PORT=8080 DATA_DIR=/data
RUN mkdir -p /data && chown node:node /data
VOLUME /data
USER node
EXPOSE 8080

HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"

# The built bundle, as `npm run start:prod` runs it, started directly: no rebuild (`npm start`'s prestart would remove
# the root-owned dist/ as the node user and fail with EACCES), and node as PID 1 receives SIGTERM from
# `docker stop` itself (npm would have to pass it on). test/deploy/imageStart.test.ts runs this line as an
# unprivileged user over a root-built copy of the app directory.
CMD ["node", "--enable-source-maps", "dist/cli/main.js", "serve"]
