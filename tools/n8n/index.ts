// The n8n driver: runs a real n8n (installed once into a cache by scripts/install-n8n.sh) headlessly for the
// e2e tests, the demo, `npm run dev` and the benchmark. Pack this package, install the tarball as a community
// node into a fresh n8n user folder, import credentials and workflows, run each workflow with
// `n8n execute --id=<id> --rawOutput` (or start n8n as a server) and read the run data.
//
//   project.ts      package and node names, supported n8n versions, the repository root
//   process.ts      child processes, free ports
//   install.ts      n8n installs in the cache, packing this package
//   user-folder.ts  a fresh N8N_USER_FOLDER with the package installed, n8n's environment
//   cli.ts          importing, running and publishing workflows with n8n's CLI
//   server.ts       `n8n start`, its REST API and webhooks
//   run-data.ts     reading the run JSON n8n prints
//   workflows.ts    the examples/ workflows, ready to import
export * from './cli';
export * from './install';
export * from './process';
export * from './project';
export * from './run-data';
export * from './server';
export * from './user-folder';
export * from './workflows';
