// The parts of GitLab's webhook payloads this preset reads (validated before the transform
// runs; the transform types its payload from it). Only data: read as JSON5, never run.
export default {
  type: 'object',
  properties: {
    object_kind: { type: 'string' },
    ref: { type: 'string' },
    before: { type: 'string' },
    after: { type: 'string' },
    user_name: { type: 'string' },
    user_username: { type: 'string' },
    user: { type: 'object', properties: { name: { type: 'string' }, username: { type: 'string' } } },
    project: { type: 'object', properties: { path_with_namespace: { type: 'string' }, web_url: { type: 'string' } } },
    commits: {
      type: 'array',
      items: {
        type: 'object',
        properties: { id: { type: 'string' }, message: { type: 'string' }, title: { type: 'string' } },
      },
    },
    total_commits_count: { type: 'integer' },
    object_attributes: {
      type: 'object',
      properties: {
        iid: { type: 'integer' },
        id: { type: 'integer' },
        title: { type: 'string' },
        description: { type: ['string', 'null'] },
        url: { type: 'string' },
        action: { type: 'string' },
        state: { type: 'string' },
        source_branch: { type: 'string' },
        target_branch: { type: 'string' },
        ref: { type: 'string' },
        status: { type: 'string' },
      },
    },
    builds: {
      type: 'array',
      items: {
        type: 'object',
        properties: { name: { type: 'string' }, stage: { type: 'string' }, status: { type: 'string' } },
      },
    },
  },
} as const;
