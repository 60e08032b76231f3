/** What the account resolvers pass down as parents (mapped onto the GraphQL types by codegen). */

/** The account: nothing but a handle, every field reads the authorization area. */
export type AccountParent = Record<string, never>;
