/**
 * Builds an earlier commit of this repository into a directory of its own under the temp dir, for
 * the compare part: `git archive` of the commit (the repository's work trees are left alone), its
 * `node_modules` a symlink to this checkout's (or `npm ci` there), then its own `npm run build`.
 * A build is reused by the next run while its directory holds the marker written at its end.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { log } from './bench-env.js';

/** The checkout this bench was built from (`dist/bench/` is two levels down). */
export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface BaseBuild {
  /** The full commit hash, and the short one printed in tables. */
  commit: string;
  short: string;
  dir: string;
  /** The built `main.js` the compare part runs: the bundle when that build makes one. */
  entry: string;
  /** Size of `dist/bundle/main.js`, when the build makes one. */
  bundleBytes: number | null;
  reused: boolean;
}

const MARKER = '.hookgate-bench-built';

const git = (args: readonly string[]): string =>
  execFileSync('git', ['-C', REPO_ROOT, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

/** The commit `ref` names, or an error saying it is not in this repository's history. */
export function resolveCommit(ref: string): string {
  try {
    return git(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
  } catch {
    throw new Error(`compare part: "${ref}" names no commit in ${REPO_ROOT} (git show ${ref} --stat to check)`);
  }
}

/** This checkout's commit, with `+changes` when its work tree differs from it. */
export function describeHead(): string {
  const head = git(['rev-parse', '--short=7', 'HEAD']);
  const dirty = git(['status', '--porcelain', '--untracked-files=no']) !== '';
  return dirty ? `${head}+changes` : head;
}

function builtEntry(dir: string): { entry: string; bundleBytes: number | null } {
  const bundle = join(dir, 'dist', 'bundle', 'main.js');
  if (existsSync(bundle)) return { entry: bundle, bundleBytes: statSync(bundle).size };
  return { entry: join(dir, 'dist', 'src', 'main.js'), bundleBytes: null };
}

/**
 * Builds `commit` (reusing an earlier build of it unless `rebuild`), `install` saying how its
 * dependencies come: `link` shares this checkout's `node_modules` (no network; an earlier commit
 * with dependencies this one lacks fails to build, and says so), `ci` installs its own lockfile.
 */
export function buildBase(ref: string, options: { install: 'link' | 'ci'; rebuild: boolean }): BaseBuild {
  const commit = resolveCommit(ref);
  const short = commit.slice(0, 7);
  const dir = join(
    process.env['BENCH_TMPDIR'] ?? tmpdir(),
    `hookgate-bench-base-${commit.slice(0, 12)}-${options.install}`,
  );
  const marker = join(dir, MARKER);
  if (!options.rebuild && existsSync(marker) && readFileSync(marker, 'utf8') === commit) {
    log(`compare part: reusing the build of ${short} in ${dir} (BENCH_COMPARE_REBUILD=1 builds it again)`);
    return { commit, short, dir, ...builtEntry(dir), reused: true };
  }
  log(`compare part: building ${short} in ${dir} (dependencies: ${options.install})`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const tar = join(dir, 'source.tar');
  git(['archive', '--format=tar', '-o', tar, commit]);
  execFileSync('tar', ['-xf', tar, '-C', dir], { stdio: 'inherit' });
  rmSync(tar);
  if (options.install === 'link') symlinkSync(join(REPO_ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  else execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: dir, stdio: 'inherit' });
  try {
    execFileSync('npm', ['run', 'build'], { cwd: dir, stdio: ['ignore', 'pipe', 'inherit'] });
  } catch (error) {
    const hint = options.install === 'link' ? ' (BENCH_COMPARE_INSTALL=ci installs its own dependencies)' : '';
    throw new Error(`compare part: building ${short} in ${dir} failed${hint}`, { cause: error });
  }
  writeFileSync(marker, commit);
  return { commit, short, dir, ...builtEntry(dir), reused: false };
}
