/**
 * Example operations GraphiQL opens with (one tab each, the first one open). GraphiQL titles each tab
 * with its operation's name, so `title` is that name and the comments name other tabs by it (a test
 * checks both). A test runs every query through the gateway; the browser test runs the first tab,
 * OrderPatrimonialReport and WatchRequest in GraphiQL itself.
 */
export interface ExampleOperation {
  /** The tab's title: the operation's name. */
  title: string;
  query: string;
  variables?: Record<string, unknown>;
}

export const EXAMPLES: ExampleOperation[] = [
  {
    title: 'CompanyProfile',
    query: `# One company, the sections a profile page needs: two upstream calls (IT-advanced, IT-stakeholders: €0.65)
# the first time, then none (cache). extensions.cost in the response says what it cost.
query CompanyProfile($vatCode: String!) {
  company(vatCode: $vatCode) {
    vatCode
    companyName
    address { streetName zipCode town province { code description } }
    managers {
      __typename
      roles { role { code description } startDate }
      ... on ManagerPerson { name surname taxCode }
    }
    shareholders { percentShare owners { __typename taxCode } }
    ecofin { turnover netWorth shareCapital }
  }
}`,
    variables: { vatCode: '12485671007' },
  },
  {
    title: 'OwnershipWalk',
    query: `# Company shareholders are companies: walk up the group. One call per distinct company.
query OwnershipWalk($vatCode: String!) {
  company(vatCode: $vatCode) {
    companyName
    shareholders {
      percentShare
      owners {
        ... on ShareholderCompany {
          company {
            companyName
            shareholders { percentShare owners { ... on ShareholderCompany { company { companyName } } } }
          }
        }
      }
    }
  }
}`,
    variables: { vatCode: '03456783053' },
  },
  {
    title: 'Search',
    query: `# IT-search with filters and paging: count is the companies of this page. The upstream list
# does not say how many match in all: dryRun: true answers that (total) and its price (cost), with no items.
query Search {
  searchCompanies(filter: { province: "RM" }, limit: 5) {
    count
    skip
    limit
    items { vatCode companyName address { town } }
  }
}`,
  },
  {
    title: 'ForeignCompany',
    query: `query ForeignCompany {
  foreignCompany(country: "FR", id: "FR80851266429", level: START) {
    companyName
    country
  }
}`,
  },
  {
    title: 'LegalForms',
    query: `query LegalForms { legalForms { code description } }`,
  },
  {
    title: 'GroupCreditScores',
    query: `# The company's credit score and its company shareholders' ones: one call per distinct company.
query GroupCreditScores($vatCode: String!) {
  company(vatCode: $vatCode) {
    companyName
    creditScore(level: ADVANCED) { score rawScore rating severity creditLimit }
    shareholders {
      percentShare
      owners { ... on ShareholderCompany { company { companyName creditScore(level: START) { score } } } }
    }
  }
}`,
    variables: { vatCode: '03456783053' },
  },
  {
    title: 'OrderPatrimonialReport',
    query: `# Paid: orders an assets report on a person. Copy its id into the WatchRequest tab.
# With \`npm start\` the emulator completes it 30 s after the order (EMULATOR_RISK_COMPLETE_AFTER_MS).
mutation OrderPatrimonialReport {
  orderPatrimonialReport(level: STANDARD, input: { name: "MARIO", surname: "ROSSI", taxCode: "RSSMRA80A01H501U" }) {
    id
    state
    createdAt
  }
}`,
  },
  {
    title: 'WatchRequest',
    query: `# Live status: the latest known state first, then every change until it is complete.
# Paste the id the OrderPatrimonialReport tab returned into the variables below, then Run:
# PROCESSING at once, COMPLETE (with the report's URL) 30 s after the order, with \`npm start\`
# (its emulator's EMULATOR_RISK_COMPLETE_AFTER_MS, default 30000).
subscription WatchRequest($id: ID!) {
  riskRequestUpdated(id: $id) {
    id
    family
    state
    updatedAt
    ... on PatrimonialRequest { report { url expiresAt } }
  }
}`,
    variables: { id: '<request id>' },
  },
];
