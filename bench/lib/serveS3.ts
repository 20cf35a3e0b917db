/**
 * Child-process entry: s3rver (an S3-protocol server implementing multipart uploads) on 127.0.0.1 with one bucket,
 * `bench`, in S3_DIR, in a process of its own, so that the S3 server's CPU is neither the service's nor the
 * benchmark client's. Reports its port over IPC. Credentials: s3rver's built-in `S3RVER`/`S3RVER`.
 */
import S3rver from 's3rver';

const BENCH_BUCKET = 'bench';

async function main(): Promise<void> {
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: process.env.S3_DIR ?? '',
    configureBuckets: [{ name: BENCH_BUCKET, configs: [] }],
  });
  const { port } = await server.run();
  process.send?.({ port });
  process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));
  process.on('disconnect', () => process.exit(1));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
