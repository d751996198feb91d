// The github preset's transform: one agent action per event worth a look, null (204) for the
// rest. Runs sandboxed like any transform: no Node APIs, only the request it is given.

import type { FromSchema } from 'hookd/transform';
import type schema from './schema.js';

/** The payload, typed from the schema hookd validates it against. */
type GitHubPayload = FromSchema<typeof schema>;

interface Request {
  payload: unknown;
  headers: Record<string, string>;
}

/** At most `max` characters of `text`, cut with an ellipsis. */
function excerpt(text: string | null | undefined, max: number): string {
  const trimmed = (text ?? '').trim();
  return trimmed.length > max ? `${trimmed.slice(0, max - 1)}…` : trimmed;
}

/** GitHub's form-encoded deliveries carry the JSON in a `payload` field. */
function payloadOf(payload: unknown): GitHubPayload {
  if (payload && typeof payload === 'object' && typeof (payload as { payload?: unknown }).payload === 'string') {
    return JSON.parse((payload as { payload: string }).payload) as GitHubPayload;
  }
  return (payload ?? {}) as GitHubPayload;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

function push(p: GitHubPayload, repo: string, who: string): string {
  const ref = p.ref ?? '';
  const tag = ref.startsWith('refs/tags/') ? ref.slice('refs/tags/'.length) : undefined;
  const branch = ref.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : ref;
  if (tag !== undefined)
    return p.deleted ? `${who} deleted tag ${tag} in ${repo}.` : `${who} pushed tag ${tag} to ${repo}.`;
  if (p.deleted) return `${who} deleted branch ${branch} in ${repo}.`;
  const commits = p.commits ?? [];
  if (commits.length === 0) {
    return p.created
      ? `${who} created branch ${branch} in ${repo}.`
      : `${who} pushed to ${branch} of ${repo} without new commits.`;
  }
  const lines = commits
    .slice(0, 10)
    .map((c) => `- ${excerpt((c.message ?? '').split('\n')[0], 120)} (${(c.id ?? '').slice(0, 7)})`);
  const more = commits.length > 10 ? [`- … and ${commits.length - 10} more`] : [];
  const forced = p.forced ? ' (force-pushed)' : '';
  return [
    `${who} pushed ${plural(commits.length, 'commit')} to ${branch} of ${repo}${forced}: ${p.compare ?? ''}`.trim(),
    ...lines,
    ...more,
  ].join('\n');
}

const PR_ACTIONS = new Set(['opened', 'reopened', 'closed', 'ready_for_review']);
const ISSUE_ACTIONS = new Set(['opened', 'reopened', 'closed']);

export default function github({ payload, headers }: Request) {
  const event = headers['x-github-event'] ?? '';
  const p = payloadOf(payload);
  const repo = p.repository?.full_name ?? 'a repository';
  const who = p.sender?.login ?? p.pusher?.name ?? 'someone';
  const inRepo = `hook:github:${repo}`;
  switch (event) {
    case 'push': {
      return { message: push(p, repo, p.pusher?.name ?? who), sessionKey: inRepo };
    }
    case 'pull_request': {
      const pr = p.pull_request ?? {};
      if (!PR_ACTIONS.has(p.action ?? '')) return null;
      const did =
        p.action === 'closed' ? (pr.merged ? 'merged' : 'closed without merging') : p.action?.replace(/_/g, ' ');
      const body = p.action === 'opened' && pr.body ? `\n\n${excerpt(pr.body, 2000)}` : '';
      return {
        message: `${who} ${did} pull request #${pr.number} "${pr.title}" in ${repo}: ${pr.html_url}${body}`,
        sessionKey: `${inRepo}#${pr.number}`,
      };
    }
    case 'issues': {
      const issue = p.issue ?? {};
      if (!ISSUE_ACTIONS.has(p.action ?? '')) return null;
      const body = p.action === 'opened' && issue.body ? `\n\n${excerpt(issue.body, 2000)}` : '';
      return {
        message: `${who} ${p.action} issue #${issue.number} "${issue.title}" in ${repo}: ${issue.html_url}${body}`,
        sessionKey: `${inRepo}#${issue.number}`,
      };
    }
    case 'issue_comment': {
      if (p.action !== 'created') return null;
      const issue = p.issue ?? {};
      const kind = issue.pull_request ? 'pull request' : 'issue';
      return {
        message: `${who} commented on ${kind} #${issue.number} "${issue.title}" in ${repo}: ${p.comment?.html_url}\n\n${excerpt(p.comment?.body, 2000)}`,
        sessionKey: `${inRepo}#${issue.number}`,
      };
    }
    case 'release': {
      if (p.action !== 'published') return null;
      const r = p.release ?? {};
      const pre = r.prerelease ? 'pre-release' : 'release';
      const title = r.name && r.name !== r.tag_name ? ` "${r.name}"` : '';
      const notes = r.body ? `\n\n${excerpt(r.body, 2000)}` : '';
      return {
        message: `${who} published ${pre} ${r.tag_name}${title} of ${repo}: ${r.html_url}${notes}`,
        sessionKey: inRepo,
      };
    }
    case 'workflow_run': {
      const run = p.workflow_run ?? {};
      if (p.action !== 'completed' || !['failure', 'timed_out', 'startup_failure'].includes(run.conclusion ?? ''))
        return null;
      const by = run.actor?.login ?? who;
      return {
        message: `Workflow "${run.name}" ${run.conclusion === 'timed_out' ? 'timed out' : 'failed'} on ${run.head_branch} of ${repo} (run #${run.run_number}, started by ${by}): ${run.html_url}`,
        sessionKey: inRepo,
      };
    }
    default:
      // ping, and events not listed above: nothing for the assistant (204).
      return null;
  }
}
