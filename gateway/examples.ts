/** Example operations GraphiQL opens with (one tab each). Valid against the supergraph: a test runs them. */
export interface ExampleOperation {
  title: string;
  query: string;
  variables?: Record<string, unknown>;
}

export const EXAMPLES: ExampleOperation[] = [
  {
    title: 'Company overview',
    query: `# One company, the sections a profile page needs: one upstream call (IT-aml), then none (cache).
# extensions.cost in the response says what it cost.
query CompanyOverview($vatCode: String!) {
  company(vatCode: $vatCode) {
    vatCode
    companyName
    address { streetName zipCode town province { code description } }
    activityStatus { code description }
    managers { __typename ... on ManagerPerson { name surname } roles { role { description } } }
    shareholders { percentShare }
    ecofin { turnover netWorth shareCapital }
  }
}`,
    variables: { vatCode: '12485671007' },
  },
];
