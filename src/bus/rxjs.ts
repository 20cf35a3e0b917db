/**
 * The RxJS values this service uses, each required from its own module: `require('rxjs')` loads the whole library
 * (every operator and observable factory, about 45 ms of a cold start here, for the four used). `rxjs/internal/*`
 * is in rxjs's package exports, and these are the same classes and functions the `rxjs` entry re-exports; their
 * types are those of the entry (rxjsInternal.d.ts). Type-only imports may keep naming `rxjs`: they are erased.
 */
export { Subject } from 'rxjs/internal/Subject';
export { BehaviorSubject } from 'rxjs/internal/BehaviorSubject';
export { Observable } from 'rxjs/internal/Observable';
// eslint-disable-next-line @typescript-eslint/no-deprecated -- the re-export names every overload; callers use none deprecated
export { filter } from 'rxjs/internal/operators/filter';
