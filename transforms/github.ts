// GitHub webhooks → agent runs, one session per repository. Events it does not know are
// skipped (204). Map it with: { match: { path: 'github' }, transform: { module: 'github.ts' } }
import { defineTransform } from 'hookd/transform';

interface Repository {
  full_name: string;
}
interface GitHubPayload {
  action?: string;
  repository?: Repository;
  sender?: { login: string };
  ref?: string;
  commits?: { message: string }[];
  pusher?: { name: string };
  pull_request?: { number: number; title: string; html_url: string; merged?: boolean };
  issue?: { number: number; title: string; html_url: string };
  release?: { tag_name: string; name?: string; html_url: string };
}

const firstLine = (text: string) => text.split('\n')[0] ?? '';

export default defineTransform<GitHubPayload | null>(({ payload, headers }) => {
  // Not a GitHub event (GitHub always sends an object): skipped.
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) return null;
  const event = headers['x-github-event'];
  const repo = payload.repository?.full_name ?? 'unknown repository';
  const base = { name: `GitHub ${repo}`, sessionKey: `hook:github:${repo}` };
  switch (event) {
    case 'push': {
      const commits = payload.commits ?? [];
      const branch = (payload.ref ?? '').replace(/^refs\/heads\//, '');
      const lines = commits.slice(0, 10).map((c) => `- ${firstLine(c.message)}`);
      return {
        ...base,
        message: [
          `${payload.pusher?.name ?? 'someone'} pushed ${commits.length} commit(s) to ${repo}@${branch}:`,
          ...lines,
        ].join('\n'),
      };
    }
    case 'pull_request': {
      const pr = payload.pull_request;
      if (!pr || !['opened', 'closed', 'reopened', 'ready_for_review'].includes(payload.action ?? '')) return null;
      const what = payload.action === 'closed' ? (pr.merged ? 'merged' : 'closed without merging') : payload.action;
      return { ...base, message: `Pull request #${pr.number} "${pr.title}" was ${what} in ${repo}: ${pr.html_url}` };
    }
    case 'issues': {
      const issue = payload.issue;
      if (!issue || payload.action !== 'opened') return null;
      return { ...base, message: `New issue #${issue.number} in ${repo}: "${issue.title}" ${issue.html_url}` };
    }
    case 'release': {
      const release = payload.release;
      if (!release || payload.action !== 'published') return null;
      return { ...base, kind: 'wake', text: `Released ${repo} ${release.tag_name}: ${release.html_url}` };
    }
    default:
      return null;
  }
});
