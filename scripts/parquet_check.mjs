// Reads a Parquet dataset with DuckDB — a reader that is not ours — as a user would: every
// part under DIR, hive partitions (crawl=…/hour=…) as columns. Prints one JSON object: rows,
// distinct keys, and rows per crawl and hour.
// Usage: node scripts/parquet_check.mjs DIR   (@duckdb/node-api from .tools/duckdb, see scripts/tools.sh)
import { fileURLToPath, pathToFileURL } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));
const dir = process.env.DUCKDB_DIR || path.join(here, "..", ".tools", "duckdb", "node_modules", "@duckdb", "node-api");
const { DuckDBInstance } = await import(pathToFileURL(path.join(dir, "lib", "index.js")).href);

const root = process.argv[2];
if (!root) {
  console.error("usage: parquet_check.mjs DIR");
  process.exit(2);
}
const glob = path.join(root, "**", "*.parquet").replaceAll("'", "''");
const db = await DuckDBInstance.create(":memory:");
const c = await db.connect();
const from = `read_parquet('${glob}', hive_partitioning = true)`;
const one = async (sql) => (await c.runAndReadAll(sql)).getRowObjectsJS();
const [totals] = await one(`SELECT count(*)::INTEGER AS rows, count(DISTINCT key)::INTEGER AS keys, count(DISTINCT url)::INTEGER AS urls FROM ${from}`);
const parts = await one(`SELECT crawl::VARCHAR AS crawl, hour::VARCHAR AS hour, count(*)::INTEGER AS rows FROM ${from} GROUP BY ALL ORDER BY ALL`);
const keys = (await one(`SELECT DISTINCT key FROM ${from} ORDER BY key`)).map((r) => r.key);
console.log(JSON.stringify({ ...totals, parts, keyList: keys }));
