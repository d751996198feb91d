// The gitlab preset's transform: one agent action per event worth a look, null (204) for the
// rest. The event is X-Gitlab-Event (the payload's object_kind says the same).

import type { FromSchema } from 'hookd/transform';
import type schema from './schema.js';

/** The payload, typed from the schema hookd validates it against. */
type Payload = FromSchema<typeof schema>;

interface Request {
  payload: Payload;
  headers: Record<string, string>;
}

const ZERO = '0000000000000000000000000000000000000000';
const excerpt = (text: string | null | undefined, max: number) => {
  const t = (text ?? '').trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
};
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
const MR_ACTIONS: Record<string, string> = { open: 'opened', reopen: 'reopened', close: 'closed', merge: 'merged' };
const ISSUE_ACTIONS: Record<string, string> = { open: 'opened', reopen: 'reopened', close: 'closed' };

export default function gitlab({ payload: p, headers }: Request) {
  const event = headers['x-gitlab-event'] ?? '';
  const project = p.project?.path_with_namespace ?? 'a project';
  const who = p.user?.username ?? p.user_username ?? p.user?.name ?? p.user_name ?? 'someone';
  const inProject = `hook:gitlab:${project}`;
  const a = p.object_attributes ?? {};
  switch (event) {
    case 'Push Hook': {
      const branch = (p.ref ?? '').replace(/^refs\/heads\//, '');
      if (p.after === ZERO) return { message: `${who} deleted branch ${branch} in ${project}.`, sessionKey: inProject };
      const commits = p.commits ?? [];
      const total = p.total_commits_count ?? commits.length;
      if (total === 0) return { message: `${who} created branch ${branch} in ${project}.`, sessionKey: inProject };
      const lines = commits
        .slice(0, 10)
        .map((c) => `- ${excerpt(c.title ?? (c.message ?? '').split('\n')[0], 120)} (${(c.id ?? '').slice(0, 8)})`);
      const compare =
        p.project?.web_url && p.before
          ? ` ${p.project.web_url}/-/compare/${p.before.slice(0, 8)}...${(p.after ?? '').slice(0, 8)}`
          : '';
      return {
        message: [`${who} pushed ${plural(total, 'commit')} to ${branch} of ${project}:${compare}`, ...lines].join(
          '\n',
        ),
        sessionKey: inProject,
      };
    }
    case 'Tag Push Hook': {
      const tag = (p.ref ?? '').replace(/^refs\/tags\//, '');
      const did = p.after === ZERO ? 'deleted tag' : 'pushed tag';
      return { message: `${who} ${did} ${tag} ${p.after === ZERO ? 'in' : 'to'} ${project}.`, sessionKey: inProject };
    }
    case 'Merge Request Hook': {
      const did = MR_ACTIONS[a.action ?? ''];
      if (!did) return null;
      const body = a.action === 'open' && a.description ? `\n\n${excerpt(a.description, 2000)}` : '';
      return {
        message: `${who} ${did} merge request !${a.iid} "${a.title}" (${a.source_branch} → ${a.target_branch}) in ${project}: ${a.url}${body}`,
        sessionKey: `${inProject}!${a.iid}`,
      };
    }
    case 'Issue Hook': {
      const did = ISSUE_ACTIONS[a.action ?? ''];
      if (!did) return null;
      const body = a.action === 'open' && a.description ? `\n\n${excerpt(a.description, 2000)}` : '';
      return {
        message: `${who} ${did} issue #${a.iid} "${a.title}" in ${project}: ${a.url}${body}`,
        sessionKey: `${inProject}#${a.iid}`,
      };
    }
    case 'Pipeline Hook': {
      if (a.status !== 'failed') return null;
      const failed = (p.builds ?? []).filter((b) => b.status === 'failed').map((b) => `${b.stage}/${b.name}`);
      const jobs = failed.length > 0 ? `; failed jobs: ${failed.join(', ')}` : '';
      const link = p.project?.web_url ? ` ${p.project.web_url}/-/pipelines/${a.id}` : '';
      return {
        message: `Pipeline #${a.id} failed on ${a.ref} of ${project} (started by ${who})${jobs}.${link}`,
        sessionKey: inProject,
      };
    }
    default:
      return null;
  }
}
