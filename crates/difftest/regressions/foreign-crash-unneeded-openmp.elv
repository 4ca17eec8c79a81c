def s = DFNF ;
  parallel @ function @ function @ outermost(appliedMap) ;;
  try(storeInMemory(isApp(isApp(isMap)), lowerToC) @ argument @ outermost(appliedMap)) ;;
  lowerToC
