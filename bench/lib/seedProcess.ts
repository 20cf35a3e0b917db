/**
 * Child-process entry: seeds child folders into the service's DATA_DIR from a process of its own (another writer on
 * the same SQLite file, as a second service instance or a tool would be), so that the benchmark process measuring the
 * service is never blocked by the seeder's synchronous appends. Arguments come as JSON in SEED_ARGS; the process
 * exits 0 once every folder is appended.
 */
import { seedChildFolders, type SeedParent } from './seedFolders';

interface SeedArgs {
  dataDir: string;
  parent: SeedParent;
  count: number;
}

const args = JSON.parse(process.env.SEED_ARGS ?? '{}') as SeedArgs;
seedChildFolders(args.dataDir, args.parent, args.count).then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
