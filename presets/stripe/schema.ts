// The parts of a Stripe event this preset reads (validated before the transform runs; the
// transform types its payload from it). Only data: hookd reads it as JSON5, never runs it.
export default {
  type: 'object',
  required: ['type'],
  properties: {
    id: { type: 'string' },
    type: { type: 'string' },
    livemode: { type: 'boolean' },
    data: {
      type: 'object',
      properties: {
        object: {
          type: 'object',
          properties: {
            id: { type: 'string' },
            object: { type: 'string' },
            amount: { type: 'integer' },
            amount_due: { type: 'integer' },
            amount_paid: { type: 'integer' },
            amount_refunded: { type: 'integer' },
            currency: { type: 'string' },
            customer: {
              anyOf: [{ type: 'string' }, { type: 'object', properties: { id: { type: 'string' } } }, { type: 'null' }],
            },
            number: { type: ['string', 'null'] },
            hosted_invoice_url: { type: ['string', 'null'] },
            reason: { type: 'string' },
            status: { type: 'string' },
            evidence_details: { type: 'object', properties: { due_by: { type: 'integer' } } },
            last_payment_error: {
              anyOf: [{ type: 'object', properties: { message: { type: 'string' } } }, { type: 'null' }],
            },
            items: {
              type: 'object',
              properties: {
                data: {
                  type: 'array',
                  items: {
                    type: 'object',
                    properties: {
                      price: {
                        type: 'object',
                        properties: { nickname: { type: ['string', 'null'] }, id: { type: 'string' } },
                      },
                    },
                  },
                },
              },
            },
          },
        },
      },
    },
  },
} as const;
