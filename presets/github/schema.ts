// The parts of GitHub's webhook payloads this preset reads (hookd validates every delivery
// against it before the transform runs; the transform types its payload from it). Only data:
// hookd reads this file as JSON5 and never runs it.
export default {
  type: 'object',
  properties: {
    payload: { type: 'string', description: 'form-encoded deliveries: the JSON of the event' },
    action: { type: 'string' },
    ref: { type: 'string' },
    created: { type: 'boolean' },
    deleted: { type: 'boolean' },
    forced: { type: 'boolean' },
    compare: { type: 'string' },
    commits: {
      type: 'array',
      items: { type: 'object', properties: { id: { type: 'string' }, message: { type: 'string' } } },
    },
    pusher: { type: 'object', properties: { name: { type: 'string' } } },
    sender: { type: 'object', properties: { login: { type: 'string' } } },
    repository: { type: 'object', properties: { full_name: { type: 'string' }, html_url: { type: 'string' } } },
    pull_request: {
      type: 'object',
      properties: {
        number: { type: 'integer' },
        title: { type: 'string' },
        body: { type: ['string', 'null'] },
        html_url: { type: 'string' },
        merged: { type: ['boolean', 'null'] },
      },
    },
    issue: {
      type: 'object',
      properties: {
        number: { type: 'integer' },
        title: { type: 'string' },
        body: { type: ['string', 'null'] },
        html_url: { type: 'string' },
        pull_request: { type: 'object' },
      },
    },
    comment: { type: 'object', properties: { body: { type: 'string' }, html_url: { type: 'string' } } },
    release: {
      type: 'object',
      properties: {
        tag_name: { type: 'string' },
        name: { type: ['string', 'null'] },
        body: { type: ['string', 'null'] },
        html_url: { type: 'string' },
        prerelease: { type: 'boolean' },
      },
    },
    workflow_run: {
      type: 'object',
      properties: {
        name: { type: 'string' },
        conclusion: { type: ['string', 'null'] },
        head_branch: { type: 'string' },
        run_number: { type: 'integer' },
        html_url: { type: 'string' },
        actor: { type: 'object', properties: { login: { type: 'string' } } },
      },
    },
  },
} as const;
