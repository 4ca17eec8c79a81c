def s = DFNF ;
  try(storeInMemory(isApp(isApp(isMap)), lowerToC) @ argument @ outermost(appliedReduce)) ;;
  lowerToC
